#include "sim/scenario/scenario.hpp"

#include "base/json_input.hpp"
#include "models/devices/device_catalog.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <functional>
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

void read_prices(ObjectReader r, ScenarioPrices& p)
{
  r.list<ScenarioPrices::Gpu>(
       "gpu_hour", p.gpu_hour, "USD per GPU-hour by device, overriding or adding to the documented table",
       [](ObjectReader& g, ScenarioPrices::Gpu& gpu) {
         g.required("device", gpu.device, "catalog GPU").required("usd", gpu.usd, "USD per GPU-hour");
         const DeviceSpec* spec = DeviceCatalog::builtin().find(gpu.device);
         g.require(spec && spec->kind == "gpu", "device", "'" + gpu.device + "' is not a GPU in the device catalog");
         g.require_positive("usd", gpu.usd);
         g.require_at_most("usd", gpu.usd, 1e6);
       })
      .field("nic_hour", p.nic_hour, "USD per NIC-hour (no sourced default)")
      .field("switch_port_hour", p.switch_port_hour, "USD per switch-port-hour of the fabric (no sourced default)");
  r.require_non_negative("nic_hour", p.nic_hour);
  r.require_at_most("nic_hour", p.nic_hour, 1e6);
  r.require_non_negative("switch_port_hour", p.switch_port_hour);
  r.require_at_most("switch_port_hour", p.switch_port_hour, 1e6);
  r.finish();
}

void read_scenario(ObjectReader& r, Scenario& s)
{
  r.required("name", s.name, "scenario name; also the default output folder out/<name>/")
      .field("description", s.description, "free text shown in the summary")
      .field("seed", s.seed, "seed of every random generator")
      .choice("backend", s.backend, {{"simgrid", Backend::SIMGRID}, {"analytical", Backend::ANALYTICAL}},
              "simgrid = full flow-level contention; analytical = serialised list scheduling (task graphs) or a "
              "flow-level network (mapreduce, spark), much faster");
  r.require_non_negative("seed", static_cast<double>(s.seed));
  if (auto sweep = r.raw("sweep", "map",
                         "axes for clustersim sweep: {axes: {key: [values]}, mode: cross | zip, seeds: N}; run "
                         "ignores it (docs/sweeps.md)"))
    s.sweep = *sweep;
  read_cluster(r.child("cluster", "the machines and their network"), s.cluster);
  read_workload(r.child("workload", "what runs on the cluster"), s);
  s.policies.read(r.child("policies", "policy names per domain"));
  read_prices(r.child("prices", "what plan-capacity charges (docs/capacity.md); run ignores it"), s.prices);
  r.finish();
  r.require(!s.name.empty(), "name", "name must not be empty");
  r.require(s.name.find_first_of("/\\") == std::string::npos, "name", "name must not contain path separators");
  r.require(s.name != "." && s.name != "..", "name", "name must not be '.' or '..' (it names the folder out/<name>/)");
  // The default output folder is out/<name>[-sweep]/: a name past a file system's 255-byte names cannot be one.
  r.require(s.name.size() <= 200, "name",
            fmt::format("name is {} bytes long; at most 200 (it names the folder out/<name>/)", s.name.size()));
}

// One step of an override's path: a map key, or an index into the list the previous step named.
struct PathStep {
  std::string key;
  long index = -1;
};

// "levels[0].oversubscription" -> levels, [0], oversubscription.
std::vector<PathStep> override_path(const std::string& path, const std::function<void(const std::string&)>& fail)
{
  std::vector<PathStep> steps;
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) {
    const std::size_t bracket = k.find('[');
    const std::string key = k.substr(0, bracket);
    if (key.empty())
      fail("empty key in path");
    steps.push_back(PathStep{key, -1});
    for (std::size_t at = bracket; at != std::string::npos;) {
      const std::size_t close = k.find(']', at);
      const std::string digits = close == std::string::npos ? "" : k.substr(at + 1, close - at - 1);
      if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
        fail("'" + k + "': a list index is [N] with N a whole number");
      steps.push_back(PathStep{"", std::stol(digits)});
      at = close + 1 < k.size() ? close + 1 : std::string::npos;
      if (at != std::string::npos && k[at] != '[')
        fail("'" + k + "': unexpected text after ']'");
    }
  }
  if (path.empty() || path.back() == '.')
    fail("empty key in path");
  return steps;
}

// Tags a --set value and everything in it (a list or map given inline), so that an error about any part of it
// points at the override rather than at a position inside its text taken for the scenario file's.
void tag_override(YAML::Node node, const std::string& tag)
{
  node.SetTag(tag);
  if (node.IsSequence())
    for (std::size_t i = 0; i < node.size(); ++i)
      tag_override(node[i], tag);
  if (node.IsMap())
    for (auto it = node.begin(); it != node.end(); ++it)
      tag_override(it->second, tag);
}

// The lists a scenario may leave out whose defaults have elements an override can address: how many (each element
// written as an empty map takes its own defaults, so the written list reads as the default one).
int default_list_length(const std::string& path)
{
  static const std::map<std::string, int> lists = {
      {"cluster.network.levels", static_cast<int>(NetworkParams{}.levels.size())}};
  const auto it = lists.find(path);
  return it == lists.end() ? 0 : it->second;
}

// Splits "a.b[0].c=value" and writes value (parsed as YAML) there, creating maps on the way (list elements must
// exist already, or be a default list's: an override changes an element, it does not invent one).
void apply_override(YAML::Node root, const std::string& text, std::size_t index)
{
  auto fail = [&](const std::string& message) {
    throw InputError("--set", 1, static_cast<int>(index) + 1, "'" + text + "': " + message);
  };
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    fail("expected key.path=value");
  const std::vector<PathStep> steps = override_path(text.substr(0, eq), fail);
  const std::string value_text = text.substr(eq + 1);
  YAML::Node value;
  try { // the checks a scenario file gets: no map or list as a key, no duplicate key, no second document, ...
    value = load_yaml_document(value_text, "--set");
  } catch (const InputError& e) {
    fail(e.what());
  } catch (const YAML::Exception& e) {
    fail(e.msg);
  }
  if (value.IsNull())
    value = YAML::Node(value_text);
  tag_override(value, kOverrideTag + std::to_string(index)); // errors about this value point at its --set
  YAML::Node node = root, parent;
  std::string where, parent_key;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const PathStep& step = steps[i];
    const bool last = i + 1 == steps.size();
    if (step.index >= 0) {
      if (!node.IsDefined() && parent.IsDefined() && default_list_length(where) > 0) {
        // A list the scenario leaves at its default: written out as that many default elements to change one of.
        YAML::Node list(YAML::NodeType::Sequence);
        for (int k = 0; k < default_list_length(where); ++k)
          list.push_back(YAML::Node(YAML::NodeType::Map));
        tag_override(list, kOverrideTag + std::to_string(index));
        parent[parent_key] = list;
        node.reset(parent[parent_key]);
      }
      if (!node.IsSequence() || step.index >= static_cast<long>(node.size()))
        fail(fmt::format("'{}' has no element [{}] (it has {})", where, step.index,
                         node.IsSequence() ? std::to_string(node.size()) + " elements" : "no list"));
      if (last) {
        node[step.index] = value;
        return;
      }
      node.reset(node[step.index]);
      where += "[" + std::to_string(step.index) + "]";
      continue;
    }
    if (node.IsDefined() && !node.IsNull() && !node.IsMap())
      fail("'" + where + "' is not a map, cannot set a key inside it");
    if (last) {
      node[step.key] = value;
      return;
    }
    YAML::Node next = node[step.key];
    if (!next.IsDefined() && !(i + 1 < steps.size() && steps[i + 1].index >= 0)) {
      node[step.key] = YAML::Node(YAML::NodeType::Map);
      next = node[step.key];
      next.SetTag(kOverrideTag + std::to_string(index)); // a map the override made: errors about its key point here
    }
    parent.reset(node);
    parent_key = step.key;
    node.reset(next);
    where += (where.empty() ? "" : ".") + step.key;
  }
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
  return load_scenario_text(read_text_file(path, "scenario file"), path, overrides);
}

Scenario load_scenario_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides)
{
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
