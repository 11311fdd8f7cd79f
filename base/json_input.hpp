// Helpers to read user-supplied JSON with file:line:col errors (profiles, measurement files).
#pragma once

#include "base/input_error.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace cs {

/** Parses `text`; a syntax error, a truncation, a number past double's range or a key given twice in one object
 *  becomes InputError at its line and column. */
nlohmann::json parse_json_input(const std::string& text, const std::string& file);
/** The 1-based line and column of byte `byte` of `text`. */
std::pair<int, int> line_and_column(const std::string& text, std::size_t byte);
/** Reads a whole regular file of at most kMaxDocumentBytes; anything else is InputError(file, 0, 0) naming `what`. */
std::string read_text_file(const std::string& path, const std::string& what = "file");

/** Typed access with errors naming the JSON path. Parsed values keep no positions, so with the document's `text` an
 *  error points where the path's last key is written (found by searching the keys in order), else at 1:1. */
class JsonReader {
public:
  JsonReader(const nlohmann::json& j, std::string file, std::string path = "", const std::string* text = nullptr);
  const nlohmann::json& at(const char* key) const;
  bool has(const char* key) const { return j_.is_object() && j_.contains(key); }
  double number(const char* key) const;
  double positive(const char* key) const;
  /** A whole number in [min, max] (a tile of 0.5 rows is not a tile). */
  int integer(const char* key, int min, int max) const;
  std::string string(const char* key) const;
  JsonReader child(const char* key) const;
  JsonReader item(const nlohmann::json& value, const std::string& suffix) const;
  [[noreturn]] void fail(const std::string& message) const;
  const nlohmann::json& json() const { return j_; }
  std::string path_of(const char* key) const { return path_ + "/" + key; }

private:
  const nlohmann::json& j_;
  std::string file_;
  std::string path_;
  const std::string* text_;
};

} // namespace cs
