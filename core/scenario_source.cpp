#include "core/scenario_source.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace cs {

ScenarioSource::ScenarioSource(YAML::Node resolved, std::shared_ptr<const SourceInfo> source)
    : resolved_(std::move(resolved)), info_(std::move(source))
{}

const std::string& ScenarioSource::file() const { return info_->file; }

std::string ScenarioSource::base_dir() const { return std::filesystem::path(info_->file).parent_path().string(); }

std::string ScenarioSource::resolve(const std::string& file) const
{
  const std::filesystem::path path(file);
  return (path.is_relative() ? std::filesystem::path(base_dir()) / path : path).string();
}

YAML::Node ScenarioSource::find(const std::string& dotted_path, bool* exact) const
{
  YAML::Node node;
  node.reset(resolved_); // reset rebinds; operator= would overwrite the document with the child
  *exact = true;
  std::stringstream ss(dotted_path);
  for (std::string key; std::getline(ss, key, '.');) {
    // "graph[2]": the key, then the list's item.
    const std::size_t open = key.find('[');
    const std::string name = key.substr(0, open);
    if (!node.IsMap() || !node[name].IsDefined()) {
      *exact = false;
      break;
    }
    node.reset(node[name]);
    if (open == std::string::npos)
      continue;
    const std::size_t index = std::strtoul(key.c_str() + open + 1, nullptr, 10);
    if (!node.IsSequence() || index >= node.size()) {
      *exact = false;
      break;
    }
    node.reset(node[index]);
  }
  return node;
}

bool ScenarioSource::from_override(const std::string& dotted_path) const
{
  bool exact = false;
  const YAML::Node node = find(dotted_path, &exact);
  return exact && info_->override_of(node) >= 0;
}

InputError ScenarioSource::error_at(const std::string& dotted_path, const std::string& message) const
{
  bool exact = false;
  const YAML::Node best = find(dotted_path, &exact);
  if (const int index = info_->override_of(best); index >= 0)
    return InputError("--set", 1, index + 1, info_->overrides[index] + ": " + message);
  YAML::Mark mark = best.Mark();
  if (mark.is_null())
    return InputError(info_->file, 1, 1, message);
  return InputError(info_->file, mark.line + 1, mark.column + 1, message);
}

ObjectReader ScenarioSource::reader(const YAML::Node& node, const std::string& dotted_path) const
{
  return ObjectReader(node, info_, dotted_path);
}

} // namespace cs
