#include "base/json_input.hpp"

#include "base/input_file.hpp"

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

// Arrays and objects nest at most this deep: far more than any input needs, and little enough that nothing walking
// a document (our readers, nlohmann's dump and comparisons) can exhaust the stack.
constexpr int kMaxJsonDepth = 200;

// The byte where nesting first goes past kMaxJsonDepth (strings skipped).
std::size_t too_deep_at(const std::string& text)
{
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return 0;
}

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

// Refuses a key given twice in one object (nlohmann keeps the last; the user meant one of them).
class DuplicateKeys {
public:
  DuplicateKeys() = default;
  bool operator()(int depth, nlohmann::json::parse_event_t event, const nlohmann::json& parsed)
  {
    using E = nlohmann::json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth >= kMaxJsonDepth) {
      too_deep_ = true;
      return false; // not kept: the document is refused once parsed, and nothing deeper is built meanwhile
    }
    if (event == E::object_start)
      keys_.emplace_back();
    else if (event == E::object_end && !keys_.empty())
      keys_.pop_back();
    else if (event == E::key && !keys_.empty() && !keys_.back().insert(parsed.get<std::string>()).second)
      duplicate_ = parsed.get<std::string>();
    return true;
  }
  const std::string& duplicate() const { return duplicate_; }
  bool too_deep() const { return too_deep_; }

private:
  bool too_deep_ = false;
  std::vector<std::set<std::string>> keys_;
  std::string duplicate_;
};

} // namespace

nlohmann::json parse_json_input(const std::string& text, const std::string& file)
{
  try {
    DuplicateKeys keys;
    nlohmann::json j = nlohmann::json::parse(text, std::ref(keys));
    if (keys.too_deep()) {
      const auto [line, column] = line_and_column(text, too_deep_at(text));
      throw InputError(file, line, column,
                       fmt::format("arrays and objects nest more than {} deep; clustersim refuses it", kMaxJsonDepth));
    }
    if (!keys.duplicate().empty()) {
      const std::string quoted = "\"" + keys.duplicate() + "\"";
      const std::size_t first = text.find(quoted);
      const std::size_t second = text.find(quoted, first == std::string::npos ? 0 : first + 1);
      const auto [line, column] = line_and_column(text, second == std::string::npos ? 0 : second);
      throw InputError(file, line, column, "key '" + keys.duplicate() + "' appears twice in one object");
    }
    return j;
  } catch (const nlohmann::json::out_of_range& e) {
    // "number overflow parsing '1e400'": point at the number.
    std::string what = e.what();
    std::size_t q = what.find('\'');
    std::string number = q == std::string::npos ? "" : what.substr(q + 1, what.rfind('\'') - q - 1);
    const std::size_t at = number.empty() ? 0 : text.find(number);
    const auto [line, column] = line_and_column(text, at == std::string::npos ? 0 : at);
    throw InputError(file, line, column, "number " + number + " is beyond the range of a double");
  } catch (const nlohmann::json::parse_error& e) {
    const auto [line, column] = line_and_column(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    auto cut = what.find("parse error");
    throw InputError(file, line, column, "malformed JSON: " + (cut == std::string::npos ? what : what.substr(cut)));
  }
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
