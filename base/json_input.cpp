#include "base/json_input.hpp"

#include "base/input_file.hpp"
#include "base/json_document.hpp"

#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <set>
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

std::pair<int, int> line_and_column(const std::string& text, std::size_t byte)
{
  int line = 1, column = 1;
  for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

namespace {

// Where `path` ("/a/b/0/c") is written: each key searched for after the previous one (array indices skipped).
std::size_t locate(const std::string& text, const std::string& path)
{
  std::size_t pos = 0, found = 0;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    const std::string key = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    start = slash == std::string::npos ? path.size() + 1 : slash + 1;
    if (key.empty() || key.find_first_not_of("0123456789") == std::string::npos)
      continue;
    const std::size_t at = text.find("\"" + key + "\"", pos);
    if (at == std::string::npos)
      break;
    found = pos = at;
  }
  return found;
}

} // namespace

nlohmann::json parse_json_input(const std::string& text, const std::string& file)
{
  return build_json_document(text, file);
}

JsonReader::JsonReader(const nlohmann::json& j, std::string file, std::string path, const std::string* text)
    : j_(j), file_(std::move(file)), path_(std::move(path)), text_(text)
{}

void JsonReader::fail(const std::string& message) const
{
  const auto [line, column] = text_ ? line_and_column(*text_, locate(*text_, path_)) : std::pair<int, int>{1, 1};
  throw InputError(file_, line, column, (path_.empty() ? "" : "at " + path_ + ": ") + message);
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

int JsonReader::integer(const char* key, int min, int max) const
{
  const double v = number(key);
  if (v != std::floor(v) || v < min || v > max)
    item(at(key), key).fail(fmt::format("must be a whole number from {} to {}, got {}", min, max, at(key).dump()));
  return static_cast<int>(v);
}

std::string JsonReader::string(const char* key) const
{
  const auto& v = at(key);
  if (!v.is_string())
    item(v, key).fail("expected a string");
  return v.get<std::string>();
}

JsonReader JsonReader::child(const char* key) const { return JsonReader(at(key), file_, path_of(key), text_); }

JsonReader JsonReader::item(const nlohmann::json& value, const std::string& suffix) const
{
  return JsonReader(value, file_, path_ + "/" + suffix, text_);
}

} // namespace cs
