// Where each value of a scenario came from (file position or --set override), so any component can blame a key.
#pragma once

#include "base/input_error.hpp"
#include "base/yaml_reader.hpp"

#include <memory>
#include <string>

namespace cs {

/** The resolved scenario document (--set overrides applied and tagged) and its source. */
class ScenarioSource {
public:
  ScenarioSource() = default;
  ScenarioSource(YAML::Node resolved, std::shared_ptr<const SourceInfo> source);

  /** An InputError positioned at the value of `dotted_path` (or its nearest existing parent); a value that came
   *  from `--set` is blamed on that override. */
  InputError error_at(const std::string& dotted_path, const std::string& message) const;
  /** Whether the value at `dotted_path` (which must exist) was given by a --set override. */
  bool from_override(const std::string& dotted_path) const;
  /** The scenario file and the folder relative paths in it are resolved against. */
  const std::string& file() const;
  std::string base_dir() const;
  /** `file` as given in the scenario: absolute, or relative to the scenario's folder. */
  std::string resolve(const std::string& file) const;
  /** A reader over the map at `dotted_path` (absent: an empty map), for components that read their own keys. */
  ObjectReader reader(const YAML::Node& node, const std::string& dotted_path) const;
  const YAML::Node& resolved() const { return resolved_; }
  const std::shared_ptr<const SourceInfo>& info() const { return info_; }

private:
  /** The node at `dotted_path`, or its nearest existing parent; `exact` says whether the whole path exists. */
  YAML::Node find(const std::string& dotted_path, bool* exact) const;
  YAML::Node resolved_;
  std::shared_ptr<const SourceInfo> info_ = std::make_shared<SourceInfo>();
};

} // namespace cs
