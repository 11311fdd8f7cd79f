// Workload kind `chakra-replay`: one rank's Chakra execution trace (what ASTRA-sim consumes) replayed as a task graph,
// on the recorded GPU and fabric or on another (kernels rescaled between GPUs, sized collectives priced by the tuner).
#include "core/chrome_trace.hpp"
#include "core/workload.hpp"
#include "workloads/replay/chakra_graph.hpp"
#include "workloads/replay/replay_graph.hpp"
#include "workloads/replay/replay_metrics.hpp"

#include <fmt/format.h>

namespace cs {
namespace {

struct ChakraParams {
  std::string trace;
  std::string from_device; // "" = the cluster's device: kernels as measured
  ReplayCollectives collectives = ReplayCollectives::AUTO;
  int ranks = 0;
};

class ChakraReplayKind : public Workload {
public:
  void configure(ObjectReader& r) override
  {
    r.required("execution_trace", p_.trace,
               "a Chakra execution trace: .et (protobuf) or its JSON form, maybe .gz, relative to the scenario")
        .field("from_device", p_.from_device,
               "catalog GPU the trace ran on (default: the cluster's, kernels as measured)")
        .choice("collectives", p_.collectives, kReplayCollectivesChoices,
                "GPU collectives with a size: their measured time, or the tuner's for this cluster (auto: modeled "
                "unless the cluster is the recorded one); those without a measured time are always priced")
        .field("ranks", p_.ranks, "priced collectives' group size (0 = the trace's ngpus, else the cluster's GPUs)");
    r.require_non_negative("ranks", p_.ranks);
    r.require_at_most("ranks", p_.ranks, 1 << 20);
  }

  void check(const WorkloadEnv& env) const override
  {
    check_replay_inputs(env, "chakra-replay", "execution_trace", p_.trace, p_.from_device, p_.ranks);
  }

  WorkloadOutput run(const RunEnv& env) const override
  {
    const ChakraTrace trace = read_chakra(env.source->resolve(p_.trace));
    if (trace.world_size > env.cluster->gpus && p_.ranks == 0)
      throw env.error_at("workload.execution_trace",
                         fmt::format("the trace ran on {} GPUs and the cluster has {}: give ranks, or a larger "
                                     "cluster",
                                     trace.world_size, env.cluster->gpus));
    ChakraReplayOptions o;
    o.from = p_.from_device.empty() ? env.device : DeviceCatalog::builtin().find(p_.from_device);
    o.to = env.device;
    o.platform = env.platform;
    o.ranks = p_.ranks > 0 ? p_.ranks : trace.world_size > 0 ? trace.world_size : env.cluster->gpus;
    const bool recorded_cluster =
        o.from == o.to && p_.ranks == 0 && (trace.world_size == 0 || trace.world_size == env.cluster->gpus);
    o.model_collectives = models_collectives(p_.collectives, recorded_cluster);
    const ChakraReplay replay = build_chakra_replay(trace, o);
    const Timeline tl = env.execute(replay.graph);
    WorkloadOutput out;
    RunMetrics& M = out.metrics;
    M.set(metric::iteration_time_s, tl.makespan);
    M.set(metric::makespan_s, tl.makespan);
    if (replay.recorded_span_s > 0) {
      M.set(metric::recorded_step_time_s, replay.recorded_span_s);
      M.set(metric::step_time_error, tl.makespan / replay.recorded_span_s - 1);
    }
    auto& B = out.metrics.breakdown;
    B["nodes"] = static_cast<double>(trace.nodes.size());
    B["cpu_ops"] = replay.cpu_ops;
    B["kernels"] = replay.kernels;
    B["collectives"] = replay.collectives;
    B["modeled_collectives"] = replay.modeled_collectives;
    B["other_nodes"] = replay.other;
    B["lanes"] = replay.streams;
    B["dropped_dependencies"] = trace.dropped_deps;
    B["recorded_gpu_s"] = replay.recorded_gpu_s;
    B["recorded_cpu_s"] = replay.recorded_cpu_s;
    if (env.trace)
      out.trace_json = chrome_trace_json(replay.graph, tl, *env.platform);
    out.summary =
        fmt::format("  trace     {} (Chakra {}{}): {} nodes: {} CPU ops, {} kernels, {} GPU collectives, "
                    "{} other; {} threads and streams\n",
                    trace.file, trace.form, trace.schema.empty() ? "" : " schema " + trace.schema, trace.nodes.size(),
                    replay.cpu_ops, replay.kernels, replay.collectives, replay.other, replay.streams);
    out.summary += fmt::format("  replay    on {}; kernels {}; {} collectives priced for {} ranks\n", env.device->name,
                               o.from == o.to ? "as measured" : "rescaled from " + o.from->name,
                               replay.modeled_collectives, o.ranks);
    out.summary += fmt::format("  step      {:.2f} ms replayed; measured work {:.2f} ms GPU, {:.2f} ms CPU{}\n",
                               1e3 * tl.makespan, 1e3 * replay.recorded_gpu_s, 1e3 * replay.recorded_cpu_s,
                               replay.recorded_span_s > 0
                                   ? fmt::format("; {:.2f} ms recorded ({:+.1f}%)", 1e3 * replay.recorded_span_s,
                                                 100 * M.at(metric::step_time_error))
                                   : "; the trace has no start times, so no recorded step");
    out.wall_note = fmt::format(" ({} tasks)", replay.graph.size());
    return out;
  }

  std::unique_ptr<Workload> clone() const override { return std::make_unique<ChakraReplayKind>(*this); }

private:
  ChakraParams p_;
};

} // namespace

CS_REGISTER_WORKLOAD(ChakraReplayKind, "chakra-replay",
                     "a Chakra execution trace replayed on the recorded or another GPU and fabric");

} // namespace cs
