// Typed, position-aware reading of YAML maps: every key declared with a type and help text, unknown keys rejected.
#pragma once

#include "base/input_error.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace cs {

/** Strong types so that a field's unit is part of its declaration. Values are SI: bytes, bytes/s, seconds. */
struct Bytes {
  double value = 0;
};
struct Rate {
  double value = 0;
};
struct Seconds {
  double value = 0;
};

/** One documented key, collected when a reader runs in describe mode (for docs and `clustersim validate`). */
struct FieldDoc {
  std::string path; // e.g. "cluster.network.nic_bandwidth"
  std::string type; // e.g. "rate", "int", "one of: a | b"
  std::string default_value;
  std::string help;
};

/** The tag a `--set` override's value carries ("!cs-set-<index into SourceInfo::overrides>"). */
inline constexpr const char* kOverrideTag = "!cs-set-";
/** Removes the `--set` override tags from `node` and everything under it (for YAML written back out). */
void strip_override_tags(YAML::Node node);

/** Where a YAML document came from, and where `--set` overrides came from, for error positions. */
struct SourceInfo {
  std::string file;
  std::vector<std::string> overrides; // "--set" texts, in order; node tags point into this list
  /** The override that set `node`, or -1 (a tag a user wrote that looks like ours but names no override: -1). */
  int override_of(const YAML::Node& node) const;
};

/** Reads one YAML map into a params struct, field by field.
 *
 *  Each `field()` call declares a key (its type comes from the C++ variable, its default is the variable's
 *  current value) and reads it if present. `finish()` then rejects any key that was not declared, with a
 *  did-you-mean suggestion. In describe mode (no node) nothing is read and every declaration is recorded
 *  as a FieldDoc instead, so the same parse code documents the schema. */
class ObjectReader {
public:
  ObjectReader(YAML::Node node, std::shared_ptr<const SourceInfo> source, std::string path);
  /** Describe mode: records declarations into `sink`. */
  ObjectReader(std::vector<FieldDoc>* sink, std::string path);

  template <class T> ObjectReader& field(const char* key, T& value, const char* help)
  {
    declare(key, help, type_name(value), to_text(value));
    if (auto n = lookup(key))
      decode(*n, value);
    return *this;
  }
  /** A string restricted to `choices`; an unknown value lists the valid ones. */
  ObjectReader& choice(const char* key, std::string& value, const std::vector<std::string>& choices, const char* help);
  /** The same for an enum: each choice's spelling and value; the value is typed from here on. */
  template <class E>
  ObjectReader& choice(const char* key, E& value, const std::vector<std::pair<std::string, E>>& choices,
                       const char* help)
  {
    std::vector<std::string> names;
    std::string text;
    for (const auto& [name, v] : choices) {
      names.push_back(name);
      if (v == value && text.empty())
        text = name;
    }
    choice(key, text, names, help);
    for (const auto& [name, v] : choices)
      if (name == text)
        value = v;
    return *this;
  }
  /** A key that must be present. */
  template <class T> ObjectReader& required(const char* key, T& value, const char* help)
  {
    declare(key, help, type_name(value), "(required)");
    if (describing())
      return *this;
    auto n = lookup(key);
    if (!n)
      fail(node_, "missing required key '" + path_of(key) + "'");
    decode(*n, value);
    return *this;
  }
  /** A key of any shape that the caller decodes itself (e.g. a scalar or a map); declared with `type` for docs. */
  std::optional<YAML::Node> raw(const char* key, const char* type, const char* help)
  {
    declare(key, help, type, "");
    return lookup(key);
  }
  /** A nested map; absent means all defaults. */
  ObjectReader child(const char* key, const char* help);
  /** A list of maps, each read by `read_item`. */
  template <class T>
  ObjectReader& list(const char* key, std::vector<T>& out, const char* help,
                     const std::function<void(ObjectReader&, T&)>& read_item)
  {
    declare(key, help, "list of maps", out.empty() ? "[]" : std::to_string(out.size()) + " items");
    if (describing()) {
      T item{};
      ObjectReader r(sink_, path_of(key) + "[]");
      read_item(r, item);
      return *this;
    }
    auto n = lookup(key);
    if (!n)
      return *this;
    if (!n->IsSequence())
      fail(*n, "'" + path_of(key) + "' must be a list");
    out.clear();
    for (std::size_t i = 0; i < n->size(); ++i) {
      T item{};
      ObjectReader r((*n)[i], source_, path_of(key) + "[" + std::to_string(i) + "]");
      read_item(r, item);
      r.finish();
      out.push_back(std::move(item));
    }
    return *this;
  }

  /** Range checks that fail at the key's value (no-ops while describing). */
  void require_positive(const char* key, double value) const;
  void require_non_negative(const char* key, double value) const;
  /** A documented upper bound (docs/scenarios.md, "Bounds"): past it an input error, never a silent clamp. */
  void require_at_most(const char* key, double value, double max) const;
  /** Fails at `key` with `message` unless `ok` (no-op while describing). */
  void require(bool ok, const char* key, const std::string& message) const;

  /** Rejects undeclared keys (with a did-you-mean suggestion). Call after the last field(). */
  void finish() const;

  bool describing() const { return sink_ != nullptr; }
  /** Sets the documented default of `key`, declared just before (describe mode only). */
  void document_default(const char* key, const std::string& value) const
  {
    if (sink_ && !sink_->empty() && sink_->back().path == path_of(key))
      sink_->back().default_value = value;
  }
  /** Adds a key documented elsewhere (describe mode only). */
  void document(FieldDoc doc) const
  {
    if (sink_)
      sink_->push_back(std::move(doc));
  }
  bool has(const char* key) const { return !describing() && lookup(key).has_value(); }
  /** Throws an InputError positioned at `node` (or at this map when `node` has no position). */
  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const;
  /** Throws an InputError positioned at the value of `key` (or at this map if absent). */
  [[noreturn]] void fail_at(const char* key, const std::string& message) const;
  const std::string& path() const { return path_; }
  /** The file this map was read from ("" when unknown or describing). */
  std::string source_file() const { return source_ ? source_->file : std::string(); }
  std::string path_of(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  const YAML::Node& node() const { return node_; }

private:
  std::optional<YAML::Node> lookup(const char* key) const;
  void declare(const char* key, const char* help, const std::string& type, const std::string& default_value);

  void decode(const YAML::Node& n, int& v) const;
  void decode(const YAML::Node& n, long long& v) const;
  void decode(const YAML::Node& n, double& v) const;
  void decode(const YAML::Node& n, bool& v) const;
  void decode(const YAML::Node& n, std::string& v) const;
  void decode(const YAML::Node& n, Bytes& v) const;
  void decode(const YAML::Node& n, Rate& v) const;
  void decode(const YAML::Node& n, Seconds& v) const;
  void decode(const YAML::Node& n, std::vector<double>& v) const;
  void decode(const YAML::Node& n, std::vector<int>& v) const;
  void decode(const YAML::Node& n, std::vector<std::string>& v) const;
  std::string scalar(const YAML::Node& n, const char* what) const;

  static std::string type_name(int) { return "int"; }
  static std::string type_name(long long) { return "int"; }
  static std::string type_name(double) { return "number"; }
  static std::string type_name(bool) { return "bool"; }
  static std::string type_name(const std::string&) { return "string"; }
  static std::string type_name(Bytes) { return "size"; }
  static std::string type_name(Rate) { return "rate"; }
  static std::string type_name(Seconds) { return "time"; }
  static std::string type_name(const std::vector<double>&) { return "list of numbers"; }
  static std::string type_name(const std::vector<int>&) { return "list of ints"; }
  static std::string type_name(const std::vector<std::string>&) { return "list of strings"; }
  static std::string to_text(int v);
  static std::string to_text(long long v);
  static std::string to_text(double v);
  static std::string to_text(bool v);
  static std::string to_text(const std::string& v);
  static std::string to_text(Bytes v);
  static std::string to_text(Rate v);
  static std::string to_text(Seconds v);
  static std::string to_text(const std::vector<double>& v);
  static std::string to_text(const std::vector<int>& v);
  static std::string to_text(const std::vector<std::string>& v);

  YAML::Node node_;
  std::shared_ptr<const SourceInfo> source_;
  std::string path_;
  std::vector<FieldDoc>* sink_ = nullptr;
  std::vector<std::string> declared_;
};

/** Loads one YAML document and refuses what would be silently ambiguous: a second document after `---`, a key
 *  given twice in one map, a key that is not a scalar, a tag that imitates a --set marker, and documents of more
 *  than a million nodes (aliases can make a small file enormous). InputError at the offending position. */
YAML::Node load_yaml_document(const std::string& text, const std::string& file);

/** The closest of `candidates` to `word` by edit distance, or "" when none is close enough to suggest. */
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

} // namespace cs
