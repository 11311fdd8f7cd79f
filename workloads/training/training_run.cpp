// Runs a training workload: the task graph of its parallel plan on the scenario's backend, then its metrics,
// memory footprint, summary and trace.
#include "base/units.hpp"
#include "core/chrome_trace.hpp"
#include "models/cost/device_profile.hpp"
#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/memory_footprint.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "policies/sync/gradient_sync.hpp"
#include "workloads/training/data_parallel_training.hpp"
#include "workloads/training/layer_graph_training.hpp"
#include "workloads/training/pipeline_training.hpp"
#include "workloads/training/training_metrics.hpp"
#include "workloads/training/training_workload.hpp"

#include <fmt/format.h>
#include <map>

namespace cs {
namespace {

std::string summary_text(const TrainingParams& w, const RunEnv& env, const TrainingGraph& tr, const RunMetrics& m)
{
  const auto& M = m.metrics;
  const auto& B = m.breakdown;
  const ClusterParams& c = *env.cluster;
  const PlatformSpec& p = *env.platform;
  std::string out;
  out += fmt::format("  cluster   {} x {} {} ({}, {} network, {} model)\n", c.nodes, c.gpus_per_node,
                     p.device->display_name, c.intra_node.kind, c.network.kind, p.network_model);
  const std::string shape =
      w.model.graph.empty() ? fmt::format("{} layers, hidden {}, seq {}", w.model.layers, w.model.hidden, w.model.seq)
                            : fmt::format("layer graph of {} layers", w.model.graph.size());
  out += fmt::format("  workload  {}, {:.3g}B params, {}; dp {}{} x {} microbatches of {}\n", shape,
                     tr.parameters / 1e9, w.model.dtype, tr.ranks / tr.pipeline_stages / tr.tensor_parallel,
                     (tr.tensor_parallel > 1 ? fmt::format(" x tp {}", tr.tensor_parallel) : std::string()) +
                         (tr.pipeline_stages > 1 ? fmt::format(" x pp {} ({})", tr.pipeline_stages,
                                                               pipeline_schedule_name(w, *env.policies))
                                                 : std::string()),
                     tr.microbatches, w.batch.micro);
  if (M.count("bubble_fraction"))
    out += fmt::format("  pipeline  bubble {:.1f}% of compute\n", 100 * M.at("bubble_fraction"));
  out += fmt::format("  backend   {} ({} tasks, {} iterations)\n", env.backend, tr.graph.size(), w.iterations);
  out += fmt::format("  iteration {}   throughput {:.1f} samples/s   {:.1f} TFLOP/s per GPU\n",
                     units::format_time(M.at("iteration_time_s")), M.at("throughput_samples_per_s"),
                     M.at("tflops_per_gpu"));
  out += fmt::format("  time      compute {}  communication {}  exposed communication {} ({:.0f}% hidden)\n",
                     units::format_time(B.at("compute_s")), units::format_time(B.at("communication_s")),
                     units::format_time(B.at("exposed_communication_s")), 100.0 * B.at("overlap_fraction"));
  out += fmt::format("  traffic   {} per iteration ({} inter-node), {} gradient buckets\n",
                     units::format_bytes(M.at("network_bytes")), units::format_bytes(M.at("network_bytes_inter_node")),
                     tr.buckets);
  out += fmt::format("  memory    {} per GPU of {} ({}){}\n", units::format_bytes(M.at("peak_memory_bytes")),
                     units::format_bytes(M.at("memory_capacity_bytes")),
                     fmt::format("weights {}, grads {}, optimizer {}, activations {}",
                                 units::format_bytes(B.at("memory_parameters_bytes")),
                                 units::format_bytes(B.at("memory_gradients_bytes")),
                                 units::format_bytes(B.at("memory_optimizer_bytes")),
                                 units::format_bytes(B.at("memory_activations_bytes"))),
                     M.at("peak_memory_bytes") <= M.at("memory_capacity_bytes") ? "" : "  DOES NOT FIT");
  return out;
}

// Memory per GPU of a layer graph: the stage whose weights, gradients, Adam state (16 bytes per parameter in
// 16-bit mixed precision) and held activations (its layers' outputs per sample x micro x microbatches in flight)
// add up to the most, plus the gradient bucket.
MemoryFootprint layer_graph_memory(const TrainingParams& w, const LayerGraphTraining& g)
{
  const double e = dtype_bytes(w.model.dtype);
  MemoryFootprint worst;
  for (std::size_t st = 0; st < g.stage_params.size(); ++st) {
    MemoryFootprint f;
    f.parameters = g.stage_params[st] * e;
    f.gradients = g.stage_params[st] * e;
    f.optimizer = g.stage_params[st] * 12.0;
    f.activations = g.stage_activation_bytes[st] * w.batch.micro * g.stage_in_flight.at(st);
    f.buffers = w.gradient_bucket.value;
    if (st == 0 || f.total() > worst.total())
      worst = f;
  }
  return worst;
}

// Without a pipeline a GPU holds one microbatch's activations at a time; with one, what its schedule keeps. In a
// pipeline, the device whose layers and held microbatches need the most (1F1B's first stage holds p microbatches,
// its last one; a partition can give them different layer counts).
MemoryFootprint transformer_training_memory(const TrainingParams& w, const TrainingGraph& training, int dp,
                                            bool pipelined)
{
  const int tp = w.parallel.tp;
  MemoryLayout layout;
  layout.dp = dp;
  layout.pp = w.parallel.pp;
  layout.tp = tp;
  layout.in_flight_microbatches = pipelined ? (training.in_flight_peak + training.chunks - 1) / training.chunks : 1;
  layout.bucket_bytes = w.gradient_bucket.value;
  layout.layers_on_device = training.max_layers_per_device;
  layout.sequence_parallel = w.parallel.sequence_parallel && tp > 1;
  layout.zero = w.parallel.zero;
  MemoryFootprint memory = transformer_memory(w.model, w.batch.micro, layout);
  if (pipelined && !training.layers_per_device.empty()) {
    for (std::size_t d = 0; d < training.layers_per_device.size(); ++d) {
      MemoryLayout here = layout;
      here.layers_on_device = training.layers_per_device[d];
      here.in_flight_microbatches = (training.in_flight_per_device.at(d) + training.chunks - 1) / training.chunks;
      const MemoryFootprint f = transformer_memory(w.model, w.batch.micro, here);
      if (d == 0 || f.total() > memory.total() || memory.total() == 0)
        memory = f;
    }
  }
  return memory;
}

// Per pipeline stage (replica 0): compute time and the rest of the iteration, per iteration.
void add_stage_breakdown(RunMetrics& metrics, const TrainingParams& w, const TrainingGraph& training, int dp)
{
  std::map<int, double> busy_on_host;
  for (const auto& t : training.graph.tasks())
    if (t.kind == TaskKind::COMPUTE)
      busy_on_host[t.host] += t.seconds;
  for (int stage = 0; stage < w.parallel.pp; ++stage) {
    const double busy = busy_on_host[pipeline_host(w.parallel, dp, 0, stage)] / w.iterations;
    metrics.breakdown["stage" + std::to_string(stage) + "_busy_s"] = busy;
    metrics.breakdown["stage" + std::to_string(stage) + "_idle_s"] = metrics.metrics.at("iteration_time_s") - busy;
  }
}

} // namespace

WorkloadOutput TrainingWorkload::run(const RunEnv& env) const
{
  const TrainingParams& w = params;
  const PlatformSpec& platform = *env.platform;
  const DeviceSpec& device = *env.device;
  const int gpus = env.cluster->nodes * env.cluster->gpus_per_node;
  const int pp = w.parallel.pp;
  const int tp = w.parallel.tp;
  const int dp = w.parallel.dp > 0 ? w.parallel.dp : gpus / (pp * tp);
  auto sync = env.policies->make<GradientSync>("sync", *env.source);
  const DeviceProfile profile =
      env.cluster->profile.empty() ? *builtin_profile(device.name) : load_profile(env.cluster->profile);
  auto cost = make_cost_model(device, profile);
  const bool layer_graph = !w.model.graph.empty();
  const bool pipelined = pp > 1 || w.parallel.vpp > 1 || layer_graph;
  const std::string schedule_name = pipeline_schedule_name(w, *env.policies);
  auto schedule = env.policies->make<PipelineSchedule>("pipeline", *env.source, schedule_name);
  LayerGraphTraining graph_build;
  if (layer_graph)
    graph_build = build_layer_graph_training(w, *cost, dp, pp, schedule_name, *schedule, *sync, platform);
  TrainingGraph training = layer_graph ? std::move(graph_build.training)
                           : pipelined
                               ? build_pipeline_training(w, *cost, dp, pp, *schedule, *sync, platform, env.one_replica)
                               : build_data_parallel_training(w, *cost, dp, *sync, platform, env.one_replica);
  Timeline timeline = env.execute(training.graph);
  WorkloadOutput out;
  RunMetrics& metrics = out.metrics;
  metrics = training_metrics(training, timeline, platform);
  if (pipelined)
    metrics.metrics["bubble_fraction"] = (metrics.metrics.at("iteration_time_s") - metrics.breakdown.at("compute_s")) /
                                         metrics.breakdown.at("compute_s");
  const MemoryFootprint memory =
      layer_graph ? layer_graph_memory(w, graph_build) : transformer_training_memory(w, training, dp, pipelined);
  // MFU: model FLOPs per GPU-second over the dtype's dense peak.
  metrics.metrics["mfu"] = metrics.metrics.at("tflops_per_gpu") * 1e12 / device.peak(w.model.dtype);
  if (pipelined)
    add_stage_breakdown(metrics, w, training, dp);
  metrics.metrics["peak_memory_bytes"] = memory.total();
  metrics.metrics["memory_capacity_bytes"] = device.memory_bytes;
  metrics.flags["fits_in_memory"] = memory.total() <= device.memory_bytes;
  for (const auto& [k, v] : memory.breakdown())
    metrics.breakdown[k] = v;
  if (env.trace)
    out.trace_json = chrome_trace_json(training.graph, timeline, platform);
  out.summary = summary_text(w, env, training, metrics);
  return out;
}

CS_REGISTER_WORKLOAD(TrainingWorkload, "transformer-training",
                     "a transformer or layer graph trained with data, tensor and pipeline parallelism");

} // namespace cs
