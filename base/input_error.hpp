// The one exception type for bad user input: it carries file, line and column for `file:line:col: message`.
#pragma once

#include <stdexcept>
#include <string>

namespace cs {

/** A problem with what the user gave us (scenario, flags, trace). The CLI prints where() and exits 2.
 *  line and column are 1-based; 0 means "unknown" (e.g. a missing file). */
class InputError : public std::runtime_error {
public:
  InputError(std::string file, int line, int column, const std::string& message)
      : std::runtime_error(message), file_(std::move(file)), line_(line), column_(column)
  {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  /** "file:line:col: message", the one-line form the CLI contract asks for. */
  std::string where() const
  {
    return file_ + ":" + std::to_string(line_) + ":" + std::to_string(column_) + ": " + what();
  }

private:
  std::string file_;
  int line_;
  int column_;
};

} // namespace cs
