// Workload kind `kineto-replay`: a PyTorch profiler trace replayed as a task graph, on the recorded GPU and fabric or
// on another (kernels rescaled between GPUs, NCCL collectives priced by the tuner for this cluster's group).
#include "core/chrome_trace.hpp"
#include "core/workload.hpp"
#include "workloads/replay/replay_graph.hpp"
#include "workloads/replay/replay_metrics.hpp"

#include <fmt/format.h>

namespace cs {
namespace {

/** The catalog GPU a profiler's device name denotes, or "" when none does. */
std::string catalog_device(const std::string& name)
{
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("H200"))
    return "h200-sxm";
  if (has("H100"))
    return "h100-sxm5";
  if (has("A100"))
    return has("80GB") ? "a100-sxm4-80gb" : "a100-sxm4-40gb";
  if (has("V100"))
    return "v100-sxm2";
  if (has("4090"))
    return "rtx-4090";
  return "";
}

/** The replayed step on the basis the recording chose: the GPU's span when it set the pace, else the CPU's from the
 *  first step's start (its first call, less the CPU time recorded before it) to the last step's end. */
double replayed_step(const ReplayGraph& r, const Timeline& tl)
{
  const double n = static_cast<double>(r.step_start.size());
  if (r.gpu_bound) {
    double end = 0;
    for (int task : r.last_step_ops)
      end = std::max(end, tl.end[task]);
    return (end - tl.start[r.gpu_first_op]) / n;
  }
  const double start = tl.end[r.step_start.front()] - r.step_lead_s;
  const double end = r.end_marker >= 0 ? tl.end[r.end_marker] - r.step_tail_s : tl.makespan;
  return (end - start) / n;
}

struct ReplayParams {
  std::string trace;
  std::string from_device = "auto";
  ReplayCollectives collectives = ReplayCollectives::AUTO;
  int ranks = 0;
};

class KinetoReplayKind : public Workload {
public:
  void configure(ObjectReader& r) override
  {
    r.required("profiler_trace", p_.trace,
               "a PyTorch profiler (Kineto) trace, .json or .json.gz, relative to the scenario")
        .field("from_device", p_.from_device, "catalog GPU the trace ran on (auto: from its deviceProperties)")
        .choice("collectives", p_.collectives, kReplayCollectivesChoices,
                "NCCL kernels: their measured time, or the tuner's for this cluster (auto: modeled unless the cluster "
                "is the recorded one)")
        .field("ranks", p_.ranks, "modeled collectives: the group size (0 = as recorded)");
    r.require_non_negative("ranks", p_.ranks);
    r.require_at_most("ranks", p_.ranks, 1 << 20);
  }

  void check(const WorkloadEnv& env) const override
  {
    check_replay_inputs(env, "kineto-replay", "profiler_trace", p_.trace, p_.from_device, p_.ranks);
  }

  WorkloadOutput run(const RunEnv& env) const override
  {
    const KinetoTrace trace = read_kineto(env.source->resolve(p_.trace));
    const std::string from_name = p_.from_device == "auto" ? catalog_device(trace.device_name) : p_.from_device;
    if (from_name.empty())
      throw env.error_at("workload.from_device",
                         "the trace's GPU ('" + trace.device_name + "') is not in the catalog: give from_device");
    ReplayOptions o;
    o.from = DeviceCatalog::builtin().find(from_name);
    o.to = env.device;
    o.platform = env.platform;
    o.ranks = p_.ranks;
    const bool recorded_cluster = o.from == o.to && env.cluster->gpus == trace.world_size && p_.ranks == 0;
    o.model_collectives = models_collectives(p_.collectives, recorded_cluster);
    ReplayGraph replay;
    try {
      replay = build_replay(trace, o);
    } catch (const std::invalid_argument& e) { // the trace asks for what this cluster cannot hold
      throw env.error_at("workload.profiler_trace", e.what());
    }
    const Timeline tl = env.execute(replay.graph);
    WorkloadOutput out;
    RunMetrics& M = out.metrics;
    const int steps = static_cast<int>(replay.step_start.size());
    const double replayed = steps > 0 ? replayed_step(replay, tl) : 0;
    if (steps > 0) {
      M.set(metric::recorded_step_time_s, replay.recorded_step_s);
      M.set(metric::step_time_error, replayed / replay.recorded_step_s - 1);
    }
    M.set(metric::iteration_time_s, steps > 0 ? replayed : tl.makespan);
    M.set(metric::makespan_s, tl.makespan);
    auto& B = out.metrics.breakdown;
    B["steps"] = steps;
    B["kernels"] = replay.kernels;
    B["collectives"] = replay.collectives;
    B["modeled_collectives"] = replay.modeled_collectives;
    B["copies"] = replay.copies;
    B["runtime_calls"] = replay.calls;
    B["recorded_gpu_s"] = replay.recorded_gpu_s;
    if (env.trace)
      out.trace_json = chrome_trace_json(replay.graph, tl, *env.platform);
    out.summary = fmt::format("  trace     {} (rank {} of {}, {}): {} kernels, {} NCCL, {} copies, {} runtime calls\n",
                              trace.file, trace.rank, trace.world_size, from_name, replay.kernels, replay.collectives,
                              replay.copies, replay.calls);
    out.summary += fmt::format("  replay    on {}; kernels {}; collectives {}\n", env.device->name,
                               o.from == o.to ? "as measured" : "rescaled from " + from_name,
                               o.model_collectives ? "priced for this cluster" : "as measured");
    if (steps > 0)
      out.summary +=
          fmt::format("  step      {:.2f} ms replayed, {:.2f} ms recorded ({:+.1f}%), {} steps, {}\n", 1e3 * replayed,
                      1e3 * replay.recorded_step_s, 100 * M.at(metric::step_time_error), steps,
                      replay.gpu_bound ? "the GPU's pace (it ran behind the CPU)" : "as the CPU annotated them");
    out.wall_note = fmt::format(" ({} tasks)", replay.graph.size());
    return out;
  }

  std::unique_ptr<Workload> clone() const override { return std::make_unique<KinetoReplayKind>(*this); }

private:
  ReplayParams p_;
};

} // namespace

CS_REGISTER_WORKLOAD(KinetoReplayKind, "kineto-replay",
                     "a PyTorch profiler trace replayed on the recorded or another GPU and fabric");

} // namespace cs
