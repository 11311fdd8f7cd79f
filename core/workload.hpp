// The contract between the engine and a workload kind: each kind reads its own `workload:` keys, checks them
// against the cluster, runs, and reports. Kinds register by name; the engine never names one.
#pragma once

#include "base/registry.hpp"
#include "core/backend.hpp"
#include "core/policy_selection.hpp"
#include "core/run_metrics.hpp"
#include "core/scenario_source.hpp"
#include "core/task_graph.hpp"
#include "core/timeline.hpp"
#include "platform/cluster_params.hpp"
#include "platform/platform_spec.hpp"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cs {

class ActorRuntime;

/** What every workload sees of its scenario, at check time and at run time. */
struct WorkloadEnv {
  std::string scenario; // the scenario's name
  long long seed = 1;
  Backend backend = Backend::SIMGRID;
  const ClusterParams* cluster = nullptr;
  const DeviceSpec* device = nullptr;
  const PolicySelection* policies = nullptr;
  const ScenarioSource* source = nullptr;

  /** An InputError at `dotted_path` of the scenario (see ScenarioSource::error_at). */
  InputError error_at(const std::string& dotted_path, const std::string& message) const
  {
    return source->error_at(dotted_path, message);
  }
};

/** Which data-parallel replicas a training run simulates. */
enum class ReplicaMode {
  AUTO,     // every replica, unless the analytical backend runs a large graph on a network that treats replicas alike
  ALL,      // every replica
  ONE,      // replica 0; the others are symmetric and their collectives are priced by closed forms (refused where not)
  ESTIMATE, // replica 0 wherever the replicas run the same work (an MoE model only when they are alike), on any
            // network, never refused: the planners' fast estimate
};

/** At run time, also the platform and the engine's services. */
struct RunEnv : WorkloadEnv {
  const PlatformSpec* platform = nullptr;
  bool trace = false;                       // produce a Chrome trace
  ReplicaMode replicas = ReplicaMode::AUTO; // training: which data-parallel replicas to simulate
  /** Runs a task graph on the scenario's backend. */
  std::function<Timeline(const TaskGraph&)> execute;
  /** The actor runtime of this process's engine, for dynamic workloads (at most once per process). */
  std::function<std::unique_ptr<ActorRuntime>()> actors;
  /** A warning shown at once, before a long simulation starts (the run's warnings come after it). */
  std::function<void(const std::string&)> heads_up = [](const std::string&) {};
};

/** What a run produced; the engine adds the report's envelope and the summary's first and last lines. */
struct WorkloadOutput {
  RunMetrics metrics;
  std::string summary;   // lines after the header (each "  name  ..."), without the wall-time line
  std::string wall_note; // appended to the wall-time line, e.g. " (1234 tasks)"
  std::string trace_json;
  std::vector<std::pair<std::string, std::string>> files; // further outputs by name
  std::vector<std::string> warnings; // what the run did with the input that the user may not expect
};

/** One workload kind. `configure` reads `workload:` (every key but `kind`); check and run see the scenario. */
class Workload : public Configurable {
public:
  /** Throws InputError (through env.error_at) for what this kind cannot run on this cluster. */
  virtual void check(const WorkloadEnv& env) const = 0;
  /** Throws std::runtime_error or std::logic_error when the run fails, InputError for input found bad late. */
  virtual WorkloadOutput run(const RunEnv& env) const = 0;
  virtual std::unique_ptr<Workload> clone() const = 0;
  /** Whether the kind replays cluster.stragglers.step_times (recorded per-worker step times); others refuse them. */
  virtual bool replays_step_times() const { return false; }
};

/** Registers `Type` as workload kind `name` at static-initialisation time. */
#define CS_REGISTER_WORKLOAD(Type, name, description)                                                                  \
  static const bool cs_registered_workload_##Type = ::cs::Registry<::cs::Workload>::instance().add(                    \
      name, description, [] { return std::unique_ptr<::cs::Workload>(new Type()); })

} // namespace cs
