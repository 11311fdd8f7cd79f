// The scenario: what every run shares (name, seed, backend, cluster, policies) and the configured workload of its
// kind, loaded from YAML with --set overrides.
#pragma once

#include "core/policy_selection.hpp"
#include "core/scenario_source.hpp"
#include "core/workload.hpp"
#include "platform/cluster_params.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cs {

/** What `plan-capacity` charges (docs/capacity.md): per-GPU-hour prices that override or add to the documented
 *  table, and the network's NICs and switch ports per hour. `run` ignores it. */
struct ScenarioPrices {
  struct Gpu {
    std::string device;
    double usd = 0;
  };
  std::vector<Gpu> gpu_hour;
  double nic_hour = 0;         // USD per NIC-hour
  double switch_port_hour = 0; // USD per switch-port-hour (the fabric's ports, docs/capacity.md)
};

struct Scenario {
  std::string name;
  std::string description;
  YAML::Node sweep; // the `sweep:` block (clustersim sweep reads it; run ignores it)
  long long seed = 1;
  Backend backend = Backend::SIMGRID;
  ClusterParams cluster;
  std::string kind = "transformer-training"; // workload.kind: a registered workload kind
  std::shared_ptr<const Workload> workload;  // configured by its kind's reader; replace it to change it
  PolicySelection policies;
  ScenarioPrices prices;
  ScenarioSource source; // the resolved document and where it came from (for error positions)

  const std::string& file() const { return source.file(); }
  /** The environment a workload's check and run see (device filled in by the caller). */
  WorkloadEnv env(const DeviceSpec* device) const;
};

/** Loads `path`, applies `overrides` ("a.b.c=value", in order) and checks the result.
 *  Throws InputError (file:line:col) on any problem: missing file, YAML syntax, unknown key, bad value. */
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
/** load_scenario on text already read (`file` names it in errors; relative paths resolve against its folder). */
Scenario load_scenario_text(const std::string& text, const std::string& file,
                            const std::vector<std::string>& overrides = {});

/** Parses an already-loaded document (tests use this with inline YAML). */
Scenario parse_scenario(YAML::Node root, std::shared_ptr<const SourceInfo> source);

/** Every key the scenario format accepts, with type, default and help (docs and `clustersim validate --keys`). */
std::vector<FieldDoc> describe_scenario_keys();

/** The workload of `s` as `T` (e.g. TrainingWorkload); throws std::invalid_argument when it is another kind. */
template <class T> const T& workload_as(const Scenario& s)
{
  const auto* w = dynamic_cast<const T*>(s.workload.get());
  if (!w)
    throw std::invalid_argument("scenario '" + s.name + "' runs a " + s.kind + " workload");
  return *w;
}

} // namespace cs
