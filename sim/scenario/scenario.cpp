#include "sim/scenario/scenario.hpp"

#include "base/json_input.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

namespace cs {
namespace {

void read_workload(ObjectReader r, Scenario& s)
{
  const auto& kinds = Registry<Workload>::instance();
  std::string help = "what runs:";
  for (const auto& k : kinds.names())
    help += " " + k + " (" + kinds.description(k) + ");";
  help.pop_back();
  r.choice("kind", s.kind, kinds.names(), help.c_str());
  if (r.describing()) { // every kind documents its own keys; keys several kinds share are listed once
    std::vector<FieldDoc> docs;
    for (const auto& k : kinds.names()) {
      ObjectReader d(&docs, r.path());
      kinds.create(k)->configure(d);
    }
    std::vector<std::string> seen;
    for (auto& doc : docs)
      if (std::find(seen.begin(), seen.end(), doc.path) == seen.end()) {
        seen.push_back(doc.path);
        r.document(doc);
      }
    return;
  }
  auto workload = kinds.create(s.kind);
  workload->configure(r);
  r.finish();
  s.workload = std::move(workload);
}

void read_scenario(ObjectReader& r, Scenario& s)
{
  r.required("name", s.name, "scenario name; also the default output folder out/<name>/")
      .field("description", s.description, "free text shown in the summary")
      .field("seed", s.seed, "seed of every random generator")
      .choice("backend", s.backend, {"simgrid", "analytical"},
              "simgrid = full flow-level contention; analytical = serialised list scheduling, much faster");
  r.require_non_negative("seed", static_cast<double>(s.seed));
  read_cluster(r.child("cluster", "the machines and their network"), s.cluster);
  read_workload(r.child("workload", "what runs on the cluster"), s);
  s.policies.read(r.child("policies", "policy names per domain"));
  r.finish();
  r.require(!s.name.empty(), "name", "name must not be empty");
  r.require(s.name.find_first_of("/\\") == std::string::npos, "name", "name must not contain path separators");
  r.require(s.name != "." && s.name != "..", "name", "name must not be '.' or '..' (it names the folder out/<name>/)");
}

// Splits "a.b.c=value" and writes value (parsed as YAML) at a.b.c, creating maps on the way.
void apply_override(YAML::Node root, const std::string& text, std::size_t index)
{
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", 1, static_cast<int>(index) + 1, "'" + text + "': expected key.path=value");
  std::string path = text.substr(0, eq);
  std::string value_text = text.substr(eq + 1);
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) {
    if (k.empty())
      throw InputError("--set", 1, static_cast<int>(index) + 1, "'" + text + "': empty key in path");
    keys.push_back(k);
  }
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
  } catch (const YAML::Exception& e) {
    throw InputError("--set", 1, static_cast<int>(index) + 1, "'" + text + "': " + e.msg);
  }
  if (value.IsNull())
    value = YAML::Node(value_text);
  value.SetTag(kOverrideTag + std::to_string(index)); // errors about this value point at its --set
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (next.IsDefined() && !next.IsMap())
      throw InputError("--set", 1, static_cast<int>(index) + 1,
                       "'" + text + "': '" + keys[i] + "' is not a map, cannot set a key inside it");
    if (!next.IsDefined()) {
      chain.back()[keys[i]] = YAML::Node(YAML::NodeType::Map);
      next = chain.back()[keys[i]];
    }
    chain.push_back(next);
  }
  chain.back()[keys.back()] = value;
}

} // namespace

WorkloadEnv Scenario::env(const DeviceSpec* device) const
{
  WorkloadEnv e;
  e.scenario = name;
  e.seed = seed;
  e.backend = backend;
  e.cluster = &cluster;
  e.device = device;
  e.policies = &policies;
  e.source = &source;
  return e;
}

Scenario parse_scenario(YAML::Node root, std::shared_ptr<const SourceInfo> source)
{
  Scenario s;
  if (!root.IsMap())
    throw InputError(source->file, 1, 1, "a scenario must be a YAML map with at least 'name:'");
  ObjectReader r(root, source, "");
  read_scenario(r, s);
  s.source = ScenarioSource(root, source);
  return s;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides)
{
  const std::string text = read_text_file(path, "scenario file");
  YAML::Node root = load_yaml_document(text, path);
  auto source = std::make_shared<SourceInfo>();
  source->file = path;
  source->overrides = overrides;
  if (!root.IsMap() && !overrides.empty())
    throw InputError(path, 1, 1, "a scenario must be a YAML map with at least 'name:'");
  for (std::size_t i = 0; i < overrides.size(); ++i)
    apply_override(root, overrides[i], i);
  return parse_scenario(root, source);
}

std::vector<FieldDoc> describe_scenario_keys()
{
  std::vector<FieldDoc> docs;
  Scenario s;
  ObjectReader r(&docs, "");
  read_scenario(r, s);
  return docs;
}

} // namespace cs
