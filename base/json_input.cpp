#include "base/json_input.hpp"

#include "base/input_file.hpp"

#include <fstream>
#include <sstream>

namespace cs {

std::string read_text_file(const std::string& path, const std::string& what)
{
  check_input_file(path, what, kMaxDocumentBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path, 0, 0, "cannot open " + what);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json parse_json_input(const std::string& text, const std::string& file)
{
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Turn the byte offset into a line and column.
    std::size_t byte = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    int line = 1, column = 1;
    for (std::size_t i = 0; i < byte; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    auto cut = what.find("parse error");
    throw InputError(file, line, column, "malformed JSON: " + (cut == std::string::npos ? what : what.substr(cut)));
  }
}

JsonReader::JsonReader(const nlohmann::json& j, std::string file, std::string path)
    : j_(j), file_(std::move(file)), path_(std::move(path))
{}

void JsonReader::fail(const std::string& message) const
{
  throw InputError(file_, 1, 1, (path_.empty() ? "" : "at " + path_ + ": ") + message);
}

const nlohmann::json& JsonReader::at(const char* key) const
{
  if (!j_.is_object())
    fail("expected an object");
  if (!j_.contains(key))
    fail(std::string("missing key '") + key + "'");
  return j_.at(key);
}

double JsonReader::number(const char* key) const
{
  const auto& v = at(key);
  if (!v.is_number())
    item(v, key).fail("expected a number");
  return v.get<double>();
}

double JsonReader::positive(const char* key) const
{
  double v = number(key);
  if (!(v > 0))
    item(at(key), key).fail("must be positive, got " + at(key).dump());
  return v;
}

std::string JsonReader::string(const char* key) const
{
  const auto& v = at(key);
  if (!v.is_string())
    item(v, key).fail("expected a string");
  return v.get<std::string>();
}

JsonReader JsonReader::child(const char* key) const { return JsonReader(at(key), file_, path_of(key)); }

JsonReader JsonReader::item(const nlohmann::json& value, const std::string& suffix) const
{
  return JsonReader(value, file_, path_ + "/" + suffix);
}

} // namespace cs
