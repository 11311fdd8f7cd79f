#include "base/input_file.hpp"

#include "base/input_error.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace cs {

void check_input_file(const std::string& path, const std::string& what, std::uintmax_t max_bytes)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    throw InputError(path, 0, 0, "cannot open " + what + ": no such file");
  if (fs::is_directory(st))
    throw InputError(path, 0, 0, "cannot read " + what + ": it is a folder");
  if (!fs::is_regular_file(st))
    throw InputError(path, 0, 0,
                     "cannot read " + what + ": not a regular file (devices, pipes and sockets are refused)");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes)
    throw InputError(path, 0, 0,
                     fmt::format("{} is {} bytes, more than the {} bytes such a file may hold", what, size, max_bytes));
}

std::ifstream open_input_file(const std::string& path, const std::string& what)
{
  check_input_file(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path, 0, 0, "cannot open " + what + ": permission denied or unreadable");
  return in;
}

bool read_bounded_line(std::istream& in, std::string& line, std::size_t max_bytes, bool& too_long)
{
  line.clear();
  too_long = false;
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  for (int c = buf->sbumpc(); c != std::char_traits<char>::eof(); c = buf->sbumpc()) {
    any = true;
    if (c == '\n')
      return true;
    if (too_long)
      continue;
    if (line.size() >= max_bytes) {
      too_long = true;
      line.clear();
      line.shrink_to_fit();
      continue;
    }
    line.push_back(static_cast<char>(c));
  }
  if (!any)
    in.setstate(std::ios::eofbit | std::ios::failbit);
  return any;
}

} // namespace cs
