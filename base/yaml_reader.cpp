#include "base/yaml_reader.hpp"

#include "base/units.hpp"
#include "base/utf8.hpp"
#include "base/yaml_quotes.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <sstream>
#include <yaml-cpp/eventhandler.h>

namespace cs {

int SourceInfo::override_of(const YAML::Node& node) const
{
  if (!node.IsDefined())
    return -1;
  const std::string& tag = node.Tag();
  const std::size_t prefix = std::char_traits<char>::length(kOverrideTag);
  if (tag.rfind(kOverrideTag, 0) != 0 || tag.size() == prefix || tag.size() > prefix + 6)
    return -1;
  int index = 0;
  for (std::size_t i = prefix; i < tag.size(); ++i) {
    if (tag[i] < '0' || tag[i] > '9')
      return -1;
    index = index * 10 + (tag[i] - '0');
  }
  return index < static_cast<int>(overrides.size()) ? index : -1;
}

ObjectReader::ObjectReader(YAML::Node node, std::shared_ptr<const SourceInfo> source, std::string path)
    : node_(std::move(node)), source_(std::move(source)), path_(std::move(path))
{
  if (node_ && !node_.IsNull() && !node_.IsMap())
    fail(node_, "'" + (path_.empty() ? std::string("document") : path_) + "' must be a map of key: value");
}

ObjectReader::ObjectReader(std::vector<FieldDoc>* sink, std::string path) : path_(std::move(path)), sink_(sink) {}

void ObjectReader::declare(const char* key, const char* help, const std::string& type, const std::string& default_value)
{
  declared_.emplace_back(key);
  if (sink_)
    sink_->push_back(FieldDoc{path_of(key), type, default_value, help});
}

std::optional<YAML::Node> ObjectReader::lookup(const char* key) const
{
  if (describing() || !node_ || !node_.IsMap())
    return std::nullopt;
  YAML::Node n = node_[key];
  if (!n.IsDefined())
    return std::nullopt;
  return n;
}

ObjectReader ObjectReader::child(const char* key, const char* help)
{
  declare(key, help, "map", "");
  if (describing())
    return ObjectReader(sink_, path_of(key));
  auto n = lookup(key);
  return ObjectReader(n ? *n : YAML::Node(), source_, path_of(key));
}

ObjectReader& ObjectReader::choice(const char* key, std::string& value, const std::vector<std::string>& choices,
                                   const char* help)
{
  std::string joined;
  for (const auto& c : choices)
    joined += (joined.empty() ? "" : " | ") + c;
  declare(key, help, "one of: " + joined, value);
  auto n = lookup(key);
  if (!n)
    return *this;
  std::string v;
  decode(*n, v);
  if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
    std::string hint = did_you_mean(v, choices);
    fail(*n, fmt::format("'{}' is not a valid {}: expected one of {}{}", v, path_of(key), joined,
                         hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  value = v;
  return *this;
}

void ObjectReader::require_positive(const char* key, double value) const
{
  if (!describing() && !(value > 0))
    fail_at(key, fmt::format("'{}' must be positive, got {}", path_of(key), value));
}

void ObjectReader::require_non_negative(const char* key, double value) const
{
  if (!describing() && value < 0)
    fail_at(key, fmt::format("'{}' must not be negative, got {}", path_of(key), value));
}

void ObjectReader::require_at_most(const char* key, double value, double max) const
{
  if (!describing() && value > max)
    fail_at(key,
            fmt::format("'{}' must be at most {} (see Bounds in docs/scenarios.md), got {}", path_of(key), max, value));
}

void ObjectReader::require(bool ok, const char* key, const std::string& message) const
{
  if (!describing() && !ok)
    fail_at(key, message);
}

void ObjectReader::finish() const
{
  if (describing() || !node_ || !node_.IsMap())
    return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    std::string key = it->first.as<std::string>();
    if (std::find(declared_.begin(), declared_.end(), key) != declared_.end())
      continue;
    std::string hint = did_you_mean(key, declared_);
    std::string where = path_.empty() ? "at the top level" : "in '" + path_ + "'";
    std::string known; // each once: a key read two ways (a name or a map) is declared twice
    for (std::size_t i = 0; i < declared_.size(); ++i)
      if (std::find(declared_.begin(), declared_.begin() + i, declared_[i]) == declared_.begin() + i)
        known += (known.empty() ? "" : ", ") + declared_[i];
    // A key an override made (its value carries the override's tag) is blamed on that --set.
    const bool overridden = source_ && source_->override_of(it->second) >= 0;
    fail(overridden ? it->second : it->first,
         fmt::format("unknown key '{}' {}{}", key, where,
                     hint.empty() ? " (known keys: " + known + ")" : " (did you mean '" + hint + "'?)"));
  }
}

void ObjectReader::fail(const YAML::Node& node, const std::string& message) const
{
  std::string file = source_ ? source_->file : "<scenario>";
  int line = 0, column = 0;
  YAML::Mark mark = node ? node.Mark() : YAML::Mark::null_mark();
  // Values injected by --set carry the index of their override in their tag (their own mark is meaningless).
  if (const int index = node && source_ ? source_->override_of(node) : -1; index >= 0)
    throw InputError("--set", 1, index + 1, source_->overrides[index] + ": " + message);
  if (!mark.is_null()) {
    line = mark.line + 1;
    column = mark.column + 1;
  } else if (node_ && !node_.Mark().is_null()) {
    line = node_.Mark().line + 1;
    column = node_.Mark().column + 1;
  } else {
    line = 1;
    column = 1;
  }
  throw InputError(file, line, column, message);
}

void ObjectReader::fail_at(const char* key, const std::string& message) const
{
  auto n = lookup(key);
  fail(n ? *n : node_, message);
}

std::string ObjectReader::scalar(const YAML::Node& n, const char* what) const
{
  if (!n.IsScalar())
    fail(n, fmt::format("expected {} but found a {}", what, n.IsMap() ? "map" : n.IsSequence() ? "list" : "null"));
  // Text goes into report.json and the summary: refuse what is not UTF-8 here, at its position, not after the run.
  if (const std::size_t bad = invalid_utf8_at(n.Scalar()); bad != std::string::npos)
    fail(n, fmt::format("the text is not valid UTF-8 (byte {} of the value)", bad + 1));
  return n.Scalar();
}

namespace {
template <class T> bool parse_integer(const std::string& s, T& out)
{
  try {
    std::size_t used = 0;
    long long v = std::stoll(s, &used, 10);
    if (used != s.size())
      return false;
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
      return false;
    out = static_cast<T>(v);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}
} // namespace

void ObjectReader::decode(const YAML::Node& n, int& v) const
{
  std::string s = scalar(n, "an integer");
  if (!parse_integer(s, v))
    fail(n, "expected an integer, got '" + s + "'");
}

void ObjectReader::decode(const YAML::Node& n, long long& v) const
{
  std::string s = scalar(n, "an integer");
  if (!parse_integer(s, v))
    fail(n, "expected an integer, got '" + s + "'");
}

void ObjectReader::decode(const YAML::Node& n, double& v) const
{
  std::string s = scalar(n, "a number");
  try {
    std::size_t used = 0;
    v = std::stod(s, &used);
    if (used != s.size() || !std::isfinite(v))
      throw std::invalid_argument(s);
  } catch (const std::exception&) {
    fail(n, "expected a number, got '" + s + "'");
  }
}

void ObjectReader::decode(const YAML::Node& n, bool& v) const
{
  std::string s = scalar(n, "true or false");
  if (s == "true" || s == "yes" || s == "on")
    v = true;
  else if (s == "false" || s == "no" || s == "off")
    v = false;
  else
    fail(n, "expected true or false, got '" + s + "'");
}

void ObjectReader::decode(const YAML::Node& n, std::string& v) const { v = scalar(n, "a string"); }

void ObjectReader::decode(const YAML::Node& n, Bytes& v) const
{
  std::string error;
  auto parsed = units::parse_bytes(scalar(n, "a size such as 80GiB"), &error);
  if (!parsed)
    fail(n, error);
  v.value = *parsed;
}

void ObjectReader::decode(const YAML::Node& n, Rate& v) const
{
  std::string error;
  auto parsed = units::parse_rate(scalar(n, "a rate such as 400Gb/s"), &error);
  if (!parsed)
    fail(n, error);
  v.value = *parsed;
}

void ObjectReader::decode(const YAML::Node& n, Seconds& v) const
{
  std::string error;
  auto parsed = units::parse_time(scalar(n, "a time such as 1.5us"), &error);
  if (!parsed)
    fail(n, error);
  v.value = *parsed;
}

void ObjectReader::decode(const YAML::Node& n, std::vector<double>& v) const
{
  if (!n.IsSequence())
    fail(n, "expected a list of numbers");
  v.clear();
  for (std::size_t i = 0; i < n.size(); ++i) {
    double x = 0;
    decode(n[i], x);
    v.push_back(x);
  }
}

void ObjectReader::decode(const YAML::Node& n, std::vector<int>& v) const
{
  if (!n.IsSequence())
    fail(n, "expected a list of integers");
  v.clear();
  for (std::size_t i = 0; i < n.size(); ++i) {
    int x = 0;
    decode(n[i], x);
    v.push_back(x);
  }
}

void ObjectReader::decode(const YAML::Node& n, std::vector<std::string>& v) const
{
  if (!n.IsSequence())
    fail(n, "expected a list of strings");
  v.clear();
  for (std::size_t i = 0; i < n.size(); ++i)
    v.push_back(scalar(n[i], "a string"));
}

std::string ObjectReader::to_text(int v) { return std::to_string(v); }
std::string ObjectReader::to_text(long long v) { return std::to_string(v); }
std::string ObjectReader::to_text(double v) { return fmt::format("{}", v); }
std::string ObjectReader::to_text(bool v) { return v ? "true" : "false"; }
std::string ObjectReader::to_text(const std::string& v) { return v; }
std::string ObjectReader::to_text(Bytes v) { return v.value == 0 ? "0" : units::format_bytes(v.value); }
std::string ObjectReader::to_text(Rate v) { return v.value == 0 ? "(from catalog)" : units::format_rate(v.value); }
std::string ObjectReader::to_text(Seconds v) { return units::format_time(v.value); }
std::string ObjectReader::to_text(const std::vector<double>& v)
{
  std::string s;
  for (double x : v)
    s += (s.empty() ? "" : ", ") + fmt::format("{}", x);
  return "[" + s + "]";
}
std::string ObjectReader::to_text(const std::vector<int>& v)
{
  std::string s;
  for (int x : v)
    s += (s.empty() ? "" : ", ") + std::to_string(x);
  return "[" + s + "]";
}
std::string ObjectReader::to_text(const std::vector<std::string>& v)
{
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : ", ") + x;
  return "[" + s + "]";
}

namespace {

// Documents nest at most this deep: far more than any scenario needs, and little enough that walking one cannot
// exhaust the stack.
constexpr std::size_t kMaxYamlDepth = 200;

// Walks a loaded document (see load_yaml_document); `budget` bounds the nodes visited, `path` holds the nodes from
// the root to this one (an alias that names one of them makes the document cyclic).
void check_yaml_node(const YAML::Node& n, const std::string& file, long& budget, std::vector<YAML::Node>& path)
{
  auto fail = [&](const YAML::Mark& m, const std::string& message) {
    throw InputError(file, m.is_null() ? 1 : m.line + 1, m.is_null() ? 1 : m.column + 1, message);
  };
  if (--budget < 0)
    fail(n.Mark(), "the document holds more than a million nodes (aliases expanded); clustersim refuses it");
  if (n.Tag().rfind(kOverrideTag, 0) == 0)
    fail(n.Mark(), "tag '" + n.Tag() + "' is reserved for --set overrides");
  if (!n.IsSequence() && !n.IsMap())
    return;
  for (const auto& above : path)
    if (above.is(n))
      fail(n.Mark(), "an alias refers to a list or map that contains it (a recursive anchor); clustersim refuses it");
  if (path.size() >= kMaxYamlDepth)
    fail(n.Mark(), fmt::format("lists and maps nest more than {} deep; clustersim refuses it", kMaxYamlDepth));
  path.push_back(n);
  if (n.IsSequence())
    for (const auto& item : n)
      check_yaml_node(item, file, budget, path);
  if (n.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar())
        fail(kv.first.Mark(), "a map key must be a plain name, not a list or a map");
      const std::string key = kv.first.Scalar();
      auto [it, fresh] = seen.emplace(key, kv.first.Mark());
      if (!fresh)
        fail(kv.first.Mark(),
             fmt::format("key '{}' appears twice in this map (first at line {})", key, it->second.line + 1));
      check_yaml_node(kv.second, file, budget, path);
    }
  }
  path.pop_back();
}

// Records where documents start, and nothing else (to count them without building nodes).
class DocumentMarks : public YAML::EventHandler {
public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

} // namespace

YAML::Node load_yaml_document(const std::string& text, const std::string& file)
{
  check_quotes_closed(text, file);
  YAML::Node root;
  YAML::Mark second = YAML::Mark::null_mark();
  bool has_second = false;
  try {
    root = YAML::Load(text);
    // A second document, looked for with at most two parser steps: yaml-cpp's LoadAll can loop forever on
    // malformed input (found by fuzz_scenario: a document starting with ',').
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentMarks marks;
    if (parser.HandleNextDocument(marks) && parser.HandleNextDocument(marks) && marks.starts.size() > 1) {
      has_second = true;
      second = marks.starts[1];
    }
  } catch (const YAML::ParserException& e) {
    throw InputError(file, e.mark.line + 1, e.mark.column + 1, "YAML syntax error: " + e.msg);
  }
  if (has_second)
    throw InputError(file, second.is_null() ? 1 : second.line + 1, second.is_null() ? 1 : second.column + 1,
                     "a second YAML document: a scenario is one document (remove the '---' and what follows, or "
                     "split it into two files)");
  long budget = 1000000;
  std::vector<YAML::Node> path;
  check_yaml_node(root, file, budget, path);
  return root;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates)
{
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
      row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    std::size_t d = distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

void strip_override_tags(YAML::Node node)
{
  if (node.Tag().rfind(kOverrideTag, 0) == 0)
    node.SetTag("");
  if (node.IsMap())
    for (auto it = node.begin(); it != node.end(); ++it)
      strip_override_tags(it->second);
  else if (node.IsSequence())
    for (auto child : node)
      strip_override_tags(child);
}

} // namespace cs
