#include "sim/run/scenario_run.hpp"

#include "sim/exec/executor.hpp"
#include "sim/runtime/simgrid_actor_runtime.hpp"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>

#ifndef CS_VERSION
#define CS_VERSION "0.0.0"
#endif

namespace cs {

const char* clustersim_version() { return CS_VERSION; }

namespace {

void fill_report(RunResult& result, const Scenario& s, const RunMetrics& metrics, double wall)
{
  auto& r = result.report;
  r["tool"] = "clustersim";
  r["version"] = clustersim_version();
  r["scenario"] = s.name;
  r["seed"] = s.seed;
  r["backend"] = backend_name(s.backend);
  r["metrics"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : metrics.values())
    r["metrics"][k] = v;
  for (const auto& [k, v] : metrics.flags())
    r["metrics"][k] = v;
  r["breakdown"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : metrics.breakdown)
    r["breakdown"][k] = v;
  r["wall_time_s"] = wall;
}

void add_warnings(RunResult& result, const std::vector<std::string>& warnings)
{
  result.warnings = warnings;
  if (!warnings.empty())
    result.report["warnings"] = warnings;
}

} // namespace

std::string resolved_yaml(const Scenario& s)
{
  YAML::Node copy = YAML::Clone(s.source.resolved());
  strip_override_tags(copy);
  YAML::Emitter e;
  e << copy;
  return std::string(e.c_str()) + "\n";
}

RunResult run_scenario(const Scenario& s, const RunOptions& options)
{
  const auto wall_start = std::chrono::steady_clock::now();
  const DeviceSpec& device = *DeviceCatalog::builtin().find(s.cluster.device);
  PlatformSpec platform = build_platform_spec(s.cluster, device);
  apply_background_traffic(platform, s.cluster.network, s.source.base_dir());
  if (options.adjust_platform)
    options.adjust_platform(platform);
  RunEnv env;
  static_cast<WorkloadEnv&>(env) = s.env(&device);
  env.platform = &platform;
  env.trace = options.trace;
  env.replicas = options.replicas;
  env.execute = [&](const TaskGraph& graph) { return run_backend(s.backend, graph, platform); };
  env.heads_up = [](const std::string& w) { std::fprintf(stderr, "clustersim: warning: %s\n", w.c_str()); };
  env.actors = [&] {
    return s.backend == Backend::ANALYTICAL ? make_flow_level_actor_runtime(platform)
                                            : make_simgrid_actor_runtime(platform);
  };
  WorkloadOutput out;
  try {
    out = s.workload->run(env);
  } catch (const ActorLimitError& e) {
    throw s.source.error_at(
        "backend", fmt::format("this run needs {} SimGrid actors (one per stream of its task graph), more than the {} "
                               "a process can map; use the analytical backend, a smaller cluster, or fewer "
                               "iterations",
                               e.actors(), e.limit()));
  } catch (const TaskLimitError& e) {
    // Refused before memory runs out: at about 120 bytes a task, the limit is what the machine can hold.
    throw s.source.error_at(
        "workload",
        fmt::format("this run needs more than {} tasks (about {:.1f} GB); run fewer iterations, a smaller "
                    "cluster or model, {}, or raise the limit with --max-tasks",
                    e.limit(), e.limit() * 120e-9,
                    e.fold().empty() ? "simulate fewer ranks (--replicas one where replicas fold)" : e.fold()));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  RunResult result;
  fill_report(result, s, out.metrics, wall);
  result.metrics = std::move(out.metrics);
  add_warnings(result, out.warnings);
  result.trace_json = std::move(out.trace_json);
  result.files = std::move(out.files);
  result.summary = fmt::format("clustersim {} — {}\n", clustersim_version(), s.name);
  if (!s.description.empty())
    result.summary += fmt::format("  {}\n", s.description);
  result.summary += out.summary;
  result.summary += fmt::format("  wall time {:.3f} s{}\n", wall, out.wall_note);
  return result;
}

} // namespace cs
