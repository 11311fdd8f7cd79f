// Runs a training workload: the task graph of its parallel plan on the scenario's backend, then its metrics,
// memory footprint, summary and trace.
#include "base/units.hpp"
#include "core/chrome_trace.hpp"
#include "core/graph_stragglers.hpp"
#include "models/cost/device_profile.hpp"
#include "models/cost/kernel_cost_model.hpp"
#include "models/moe/moe_layer_cost.hpp"
#include "models/moe/moe_policy.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "policies/pipeline/schedule_timing.hpp"
#include "policies/sync/gradient_sync.hpp"
#include "workloads/training/moe_metrics.hpp"
#include "workloads/training/replica_fold.hpp"
#include "workloads/training/training_builder.hpp"
#include "workloads/training/training_metrics.hpp"
#include "workloads/training/training_workload.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>

namespace cs {
namespace {

// The pipeline's idle: the schedule's bubble apart from the rest where the run measured it, else together.
std::string pipeline_line(const RunMetrics& metrics)
{
  if (metrics.contains(metric::pipeline_bubble_step_fraction))
    return fmt::format("  pipeline  bubble {:.1f}% of the step (the schedule's, on compute alone); other idle {:.1f}% "
                       "(exposed communication, waits on slower ranks)\n",
                       100 * metrics.at(metric::pipeline_bubble_step_fraction),
                       100 * metrics.at(metric::other_idle_step_fraction));
  if (metrics.contains(metric::bubble_fraction))
    return fmt::format("  pipeline  idle {:.1f}% of compute (bubble and exposed communication together)\n",
                       100 * metrics.at(metric::bubble_fraction));
  return "";
}

// Each kind of communication with the share of it that compute hid (the report's per-kind figures), then the
// collectives folded into the passes (tensor- and context-parallel).
std::string communication_list(const TrainingParams& params, const std::map<std::string, double>& B)
{
  std::string comm;
  for (const auto& [key, seconds] : B) {
    const std::string prefix = "communication_", suffix = "_s";
    if (key.rfind(prefix, 0) != 0 || key == "communication_s" || seconds <= 0)
      continue;
    const std::string kind = key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
    const auto hidden = B.find("hidden_" + kind + "_fraction");
    std::string name = kind;
    std::replace(name.begin(), name.end(), '_', ' ');
    comm += fmt::format("{}{} {}", comm.empty() ? "" : ", ", name, units::format_time(seconds));
    if (hidden != B.end())
      comm += fmt::format(" ({:.0f}% hidden)", 100 * hidden->second);
  }
  if (B.count("tp_communication_s") && B.at("tp_communication_s") > 0)
    comm += fmt::format("{}tensor-parallel {} ({})", comm.empty() ? "" : ", ",
                        units::format_time(B.at("tp_communication_s")),
                        params.framework.tp_comm_overlap
                            ? (params.framework.tp_overlap.empty()
                                   ? "exposed; the rest overlapped with the GEMMs"
                                   : "exposed, and what the overlaps' SMs cost the GEMMs; the rest overlapped")
                            : "blocking, inside the passes");
  if (B.count("cp_communication_s"))
    comm += fmt::format("{}context-parallel {} ({})", comm.empty() ? "" : ", ",
                        units::format_time(B.at("cp_communication_s")),
                        params.parallel.cp_comm == CpComm::P2P ? "exposed; the rest hidden behind the attention blocks"
                                                               : "blocking, inside the passes");
  return comm;
}

// What the fabric above the NICs does to flows. Non-blocking with ideal routing, flows never contend there, so the
// simgrid and analytical backends agree by construction; an oversubscribed level no flow crossed changed nothing.
std::string fabric_words(const NetworkParams& net, const std::map<std::string, double>& breakdown)
{
  if (net.kind == NetworkKind::STAR)
    return "";
  std::string out = net.routing == FabricRouting::ECMP ? ", ECMP routing" : "";
  if (uniform_fabric(net)) // the fabric the closed forms and the replica fold take as uniform
    return ", non-blocking";
  static const char* tiers[] = {"bytes_leaf_uplink", "bytes_pod_uplink"};
  for (std::size_t l = 0; l < net.levels.size() && l < 2; ++l) {
    if (net.levels[l].oversubscription == 1.0)
      continue;
    const auto it = breakdown.find(tiers[l]);
    out += fmt::format(", {:g}:1 above the {}{}", net.levels[l].oversubscription, l == 0 ? "leaves" : "pods",
                       it == breakdown.end() || it->second <= 0 ? " (no flow crossed it)" : "");
  }
  return out;
}

// The summary's memory line: the peak against the GPU less its reserve, by what holds it.
std::string memory_line(const RunMetrics& m)
{
  const auto& B = m.breakdown;
  // Usable: the GPU less workload.memory_reserve (CUDA context, NCCL, the allocator's fragmentation).
  const double usable = m.at(metric::memory_capacity_bytes) - B.at("memory_reserve_bytes");
  const double held = B.count("memory_in_flight_microbatches") ? B.at("memory_in_flight_microbatches") : 1;
  const std::string gathered = B.count("memory_gathered_parameters_bytes")
                                   ? " (" + units::format_bytes(B.at("memory_gathered_parameters_bytes")) +
                                         " of it the stage gathered for the step)"
                                   : "";
  return fmt::format(
      "  memory    {} per GPU of {} usable (weights {}{}, grads {}, optimizer {}, activations {} for {:.3g} "
      "microbatch{} in flight, buffers {}){}\n",
      units::format_bytes(m.at(metric::peak_memory_bytes)), units::format_bytes(usable),
      units::format_bytes(B.at("memory_parameters_bytes")), gathered,
      units::format_bytes(B.at("memory_gradients_bytes")), units::format_bytes(B.at("memory_optimizer_bytes")),
      units::format_bytes(B.at("memory_activations_bytes")), held, held == 1 ? "" : "es",
      units::format_bytes(B.at("memory_buffers_bytes")),
      m.at(metric::peak_memory_bytes) <= usable ? "" : "  DOES NOT FIT");
}

std::string summary_text(const TrainingParams& params, const RunEnv& env, const TrainingGraph& tr, const RunMetrics& m)
{
  const auto& B = m.breakdown;
  const ClusterParams& cluster = *env.cluster;
  const PlatformSpec& platform = *env.platform;
  std::string out;
  out += fmt::format("  cluster   {} x {} {} ({}, {} network{}, {} model)\n", cluster.nodes, cluster.gpus_per_node,
                     platform.device->display_name, spelling(kIntraNodeKinds, cluster.intra_node.kind),
                     spelling(kNetworkKinds, cluster.network.kind), fabric_words(cluster.network, B),
                     spelling(kNetworkModels, platform.network_model));
  const std::string shape =
      params.model.graph.empty()
          ? fmt::format("{} layers, hidden {}, seq {}", params.model.layers, params.model.hidden, params.model.seq)
          : fmt::format("layer graph of {} layers", params.model.graph.size());
  out +=
      fmt::format("  workload  {}, {:.3g}B params, {}; dp {}{} x {} microbatches of {}\n", shape, tr.parameters / 1e9,
                  params.model.fp8 ? params.model.dtype + " with FP8 " + params.model.fp8->name() : params.model.dtype,
                  tr.ranks / tr.pipeline_stages / tr.tensor_parallel / params.parallel.cp,
                  (params.parallel.dp_replicate > 1 ? fmt::format(" (HSDP: {} replicas of the ZeRO-{} shards)",
                                                                  params.parallel.dp_replicate, params.parallel.zero)
                                                    : std::string()) +
                      (tr.tensor_parallel > 1 ? fmt::format(" x tp {}", tr.tensor_parallel) : std::string()) +
                      (params.parallel.cp > 1 ? fmt::format(" x cp {}", params.parallel.cp) : std::string()) +
                      (tr.pipeline_stages > 1 ? fmt::format(" x pp {} ({})", tr.pipeline_stages,
                                                            pipeline_schedule_name(params, *env.policies))
                                              : std::string()),
                  tr.microbatches, params.batch.micro);
  out += pipeline_line(m);
  const int dp = tr.ranks / (tr.pipeline_stages * tr.tensor_parallel * params.parallel.cp);
  out += fmt::format(
      "  backend   {} ({} tasks, {} iterations{})\n", backend_name(env.backend), tr.graph.size(), params.iterations,
      tr.replicas_built < dp
          ? fmt::format("; {} of {} data-parallel replicas simulated, the others {}", tr.replicas_built, dp,
                        m.contains(metric::slowest_gpu_speed) ? "folded in (each stage at its slowest GPU's speed)"
                        : tr.slowest_rank
                            ? fmt::format("folded in (their EP groups' all-to-alls counted; the one simulated runs "
                                          "group {}'s routing, the slowest, as its slowest rank each step)",
                                          tr.routing_group)
                        : tr.routing_group >= 0
                            ? fmt::format("folded in (their EP groups' all-to-alls counted; the one simulated runs "
                                          "group {}'s routing, the slowest)",
                                          tr.routing_group)
                        : tr.graph.flow_copies().replicas.empty()
                            ? "symmetric"
                            : "folded in (each flow with its copies' share of the oversubscribed links)")
          : "");
  if (m.contains(metric::slowest_gpu_speed))
    out += fmt::format("  devices   slowest GPU at {:.3f}x the catalog's speed (cluster.stragglers)\n",
                       m.at(metric::slowest_gpu_speed));
  // The figures published runs are compared on: tokens/s per GPU and MFU (model FLOPs over the dtype's peak).
  out += fmt::format("  iteration {}   throughput {:.1f} samples/s, {} tokens/s per GPU   {:.1f} TFLOP/s per GPU{}\n",
                     units::format_time(m.at(metric::iteration_time_s)), m.at(metric::throughput_samples_per_s),
                     units::format_count(m.at(metric::tokens_per_s) / tr.ranks), m.at(metric::tflops_per_gpu),
                     m.contains(metric::mfu) ? fmt::format(" (MFU {:.1f}%)", 100 * m.at(metric::mfu)) : "");
  // Idle = iteration - the busiest GPU's compute: exposed communication and pipeline bubbles together.
  out += fmt::format("  time      compute {}  idle {} (exposed communication and bubbles)\n",
                     units::format_time(B.at("compute_s")), units::format_time(B.at("exposed_communication_s")));
  const std::string comm = communication_list(params, B);
  if (!comm.empty())
    out += "  comm      " + comm + "\n";
  out += fmt::format("  traffic   {} per iteration ({} inter-node), {} gradient buckets\n",
                     units::format_bytes(m.at(metric::network_bytes)),
                     units::format_bytes(m.at(metric::network_bytes_inter_node)), tr.buckets);
  std::string tiers;
  for (const auto& [key, bytes] : B)
    if (key.rfind("bytes_", 0) == 0 && B.count("busiest_" + key.substr(6) + "_link_busy_s"))
      tiers +=
          fmt::format("{}{} {} (busiest link {})", tiers.empty() ? "" : ", ", key.substr(6), units::format_bytes(bytes),
                      units::format_time(B.at("busiest_" + key.substr(6) + "_link_busy_s")));
  if (!tiers.empty())
    out += "  links     " + tiers + "\n";
  out += memory_line(m);
  return out;
}

// An MoE layer's routed experts on one GPU at the routing's mean load.
PieceTimes experts_at_mean_load(const TrainingParams& params, const ParallelLayout& parallel,
                                const KernelCostModel& cost)
{
  const MeanExpertLoad load =
      mean_expert_load(params.model, LayerShape{params.batch.micro, parallel, params.framework});
  const ExpertCost experts(params.model, cost, params.framework, parallel.expert_tp());
  return experts.of_gpu(std::vector<double>(static_cast<std::size_t>(load.experts), load.tokens));
}

// The schedule's own idle on its busiest device, the pipeline run on its stages' compute alone (no communication,
// no stragglers, one iteration from idle; MoE layers' routed experts at `experts`), apart from the rest of the step's
// idle (exposed communication, waits on slower ranks, routing skew); both as shares of the simulated step.
void add_pipeline_bubble(RunMetrics& metrics, const TrainingGraph& tr, const StageSet& stages,
                         const PieceTimes& experts)
{
  if (tr.order.empty())
    return;
  const std::vector<StageCost> stage = with_routed_experts(stages, experts);
  auto seconds = [&stage](int vs, Pass pass) { return stage.at(vs).seconds(static_cast<int>(pass)); };
  const double alone = schedule_iteration_ends(tr.order, stages.map, seconds, {}, 1).front();
  double busy = 0;
  for (std::size_t d = 0; d < tr.order.size(); ++d) {
    double device = 0;
    for (const PipelineOp& op : tr.order[d])
      device += seconds(stages.map.stage(static_cast<int>(d), op.chunk), op.pass);
    busy = std::max(busy, device);
  }
  const double step = metrics.at(metric::iteration_time_s), bubble = std::max(0.0, alone - busy);
  metrics.breakdown["pipeline_bubble_s"] = bubble;
  metrics.set(metric::pipeline_bubble_step_fraction, bubble / step);
  metrics.set(metric::other_idle_step_fraction,
              std::max(0.0, step - metrics.breakdown.at("compute_s") - bubble) / step);
}

// The Chrome trace of what was simulated, saying what it stands for: TP rank 0 of each group, the replicas built.
std::string training_trace(const TrainingGraph& training, const Timeline& timeline, const PlatformSpec& platform)
{
  const int tp = training.tensor_parallel;
  const int dp = training.ranks / (training.pipeline_stages * tp);
  std::string note, suffix;
  if (tp > 1) {
    note = fmt::format("each device shown is TP rank 0 of its tensor-parallel group of {}: the other {} TP ranks "
                       "run the same kernels on their own GPUs and are not simulated",
                       tp, tp - 1);
    suffix = " (TP rank 0 of each group)";
  }
  if (training.replicas_built < dp)
    note += fmt::format("{}{} of {} data-parallel replicas simulated; the others run alike", note.empty() ? "" : "; ",
                        training.replicas_built, dp);
  return chrome_trace_json(training.graph, timeline, platform, note, suffix);
}

// The device whose layers and held microbatches need the most memory (1F1B's first stage holds p microbatches,
// its last one; a partition can give them different layer counts).
MemoryFootprint peak_memory(const StageSet& stages, const TrainingGraph& training)
{
  MemoryFootprint worst;
  for (std::size_t d = 0; d < training.in_flight_per_device.size(); ++d) {
    const MemoryFootprint f =
        stages.memory(static_cast<int>(d), training.in_flight_per_device[d],
                      MoeMemoryUse{training.moe.activation_scale_min, training.moe.extra_expert_slots});
    if (d == 0 || f.total() > worst.total())
      worst = f;
  }
  return worst;
}

// MoE models: the routing model and the MoE policy the plan uses (held for the run).
struct MoePolicies {
  std::unique_ptr<RoutingModel> routing;
  std::unique_ptr<MoePolicy> policy;
};

MoePolicies moe_policies(const TrainingParams& params, const RunEnv& env, TrainingPlan& plan)
{
  MoePolicies out;
  if (!params.model.moe.enabled())
    return out;
  out.routing = env.policies->make<RoutingModel>("moe_routing", *env.source);
  out.policy = env.policies->make<MoePolicy>("moe", *env.source);
  plan.routing = out.routing.get();
  plan.moe = out.policy.get();
  plan.seed = static_cast<std::uint64_t>(env.seed);
  plan.alltoall_v_closed_form = env.backend == Backend::ANALYTICAL;
  return out;
}

// Per pipeline stage (replica 0): compute time and the rest of the iteration, per iteration.
void add_stage_breakdown(RunMetrics& metrics, const TrainingParams& params, const TrainingGraph& training,
                         const ParallelLayout& parallel)
{
  std::map<int, double> busy_on_host;
  for (const auto& t : training.graph.tasks())
    if (t.kind == TaskKind::COMPUTE)
      busy_on_host[t.host] += t.seconds;
  for (int stage = 0; stage < parallel.pp; ++stage) {
    const double busy = busy_on_host[parallel.host(0, stage)] / params.iterations;
    metrics.breakdown["stage" + std::to_string(stage) + "_busy_s"] = busy;
    metrics.breakdown["stage" + std::to_string(stage) + "_idle_s"] = metrics.at(metric::iteration_time_s) - busy;
  }
}

// The GPUs of each replica's stage that the graph simulates as one rank: its tp x cp model ranks (the CP ring is priced
// inside the passes, on CP rank 0).
std::vector<std::vector<int>> model_rank_groups(const ParallelLayout& parallel)
{
  std::vector<std::vector<int>> groups;
  groups.reserve(static_cast<std::size_t>(parallel.pp) * parallel.dp);
  for (int stage = 0; stage < parallel.pp; ++stage)
    for (int r = 0; r < parallel.dp; ++r) {
      std::vector<int>& group = groups.emplace_back();
      for (int c = 0; c < parallel.cp; ++c)
        for (int host : parallel.tp_group(r, stage, c))
          group.push_back(host);
    }
  return groups;
}

// cluster.stragglers as the graph sees them: a tensor- and context-parallel group is simulated as its first rank and
// runs at its slowest rank's speed (each step of the CP ring waits for its slowest rank), each step after its longest
// random slowdown. When replica 0 stands for every replica, each of its stages runs at the slowest speed that stage
// has in any replica: the stage's data-parallel gradient sync waits for it. When one EP group's `built` replicas
// stand for the others, each built replica's stage runs at the slowest speed it has in the replicas it stands for
// (the same place in every group). (Random slowdowns are not folded across replicas.)
StragglerModel training_stragglers(const RunEnv& env, const ParallelLayout& parallel, bool one_replica, int built)
{
  // The job's GPUs only: idle ones neither take a share of the spread nor hold a step back.
  const int dp = parallel.dp, used = static_cast<int>(parallel.ranks());
  StragglerModel model =
      StragglerModel(env.cluster->stragglers, used, env.cluster->gpus_per_node, static_cast<std::uint64_t>(env.seed));
  if (!model.any()) // a uniform cluster: no groups to fold (they run to 100,000 GPUs)
    return model;
  if (parallel.model_ranks() > 1)
    model = model.slowest_and_latest_of(model_rank_groups(parallel));
  const int stand_for = one_replica ? 1 : built;
  if (stand_for <= 0 || stand_for >= dp)
    return model;
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(parallel.pp) * stand_for);
  for (int stage = 0; stage < parallel.pp; ++stage)
    for (int r = 0; r < dp; ++r)
      groups[static_cast<std::size_t>(stage) * stand_for + r % stand_for].push_back(parallel.host(r, stage));
  return model.slowest_of(groups);
}

// What a user should know about how the run was simulated.
std::vector<std::string> run_warnings(const TrainingParams& params, const RunEnv& env, bool one_replica, int gpus,
                                      const ParallelLayout& parallel)
{
  std::vector<std::string> out;
  const int pp = parallel.pp, tp = parallel.tp, dp = parallel.dp;
  if (env.cluster->stragglers.random.probability > 0 && one_replica && dp > 1)
    out.push_back("--replicas one simulates replica 0 alone: random slowdowns on the other replicas' GPUs are not "
                  "seen (their speeds are: each stage runs at its slowest replica's; use --replicas all)");
  if (const long long used = parallel.ranks(); used < gpus)
    out.push_back(fmt::format("{} of the cluster's {} GPUs are left idle: dp x tp x pp{} = {} x {} x {}{} = {} "
                              "(set workload.parallel.dp, or leave it 0 to use every GPU)",
                              gpus - used, gpus, parallel.cp > 1 ? " x cp" : "", dp, tp, pp,
                              parallel.cp > 1 ? fmt::format(" x {}", parallel.cp) : "", used));
  return out;
}

} // namespace

WorkloadOutput TrainingWorkload::run(const RunEnv& env) const
{
  const PlatformSpec& platform = *env.platform;
  const DeviceSpec& device = *env.device;
  const int gpus = env.cluster->nodes * env.cluster->gpus_per_node;
  const ParallelLayout parallel = params.parallel.layout(gpus);
  const int dp = parallel.dp;
  auto sync = env.policies->make<GradientSync>("sync", *env.source);
  const std::string schedule_name = pipeline_schedule_name(params, *env.policies);
  auto schedule = env.policies->make<PipelineSchedule>("pipeline", *env.source, schedule_name);
  const DeviceProfile profile =
      env.cluster->profile.empty() ? *builtin_profile(device.name) : load_profile(env.cluster->profile);
  auto cost = make_cost_model(device, profile);
  const bool layer_graph = !params.model.graph.empty();
  const bool pipelined = parallel.pp > 1 || parallel.vpp > 1 || layer_graph;
  StageShape shape;
  shape.parallel = parallel;
  shape.map = schedule->stage_map(parallel.pp, schedule->chunks(parallel.vpp));
  shape.graph_pipeline = schedule->runs_stage_dags();
  shape.price_dp_beside = true;
  const StageSet stages = layer_graph ? layer_graph_stages(params, *cost, platform, shape)
                                      : transformer_stages(params, *cost, platform, shape);
  TrainingPlan plan;
  plan.params = &params;
  plan.stages = &stages;
  plan.schedule = schedule.get();
  plan.sync = sync.get();
  plan.platform = &platform;
  plan.cost = cost.get();
  plan.parallel = parallel;
  plan.device_sms = device.sms;
  const MoePolicies moe = moe_policies(params, env, plan);
  check_replica_fold(env, plan);
  // Each device's speed before any fold, for the slowest-rank fold of skewed MoE routing (no other run reads it).
  std::optional<StragglerModel> device_speeds;
  if (params.model.moe.enabled()) {
    device_speeds.emplace(training_stragglers(env, parallel, false, 0));
    plan.device_speeds = &*device_speeds;
  }
  // The framework decides: Megatron-LM's 2021 local DDP reduces after the backward pass; Megatron-Core and FSDP
  // reduce buckets as backward produces them.
  plan.overlap = params.framework.overlap;
  TrainingGraph training = build_replicas(plan, env, dp);
  const StragglerModel stragglers = training_stragglers(env, parallel, plan.one_replica, plan.replicas_built);
  if (stragglers.any())
    apply_stragglers(training.graph, stragglers);
  Timeline timeline = env.execute(training.graph);
  WorkloadOutput out;
  RunMetrics& metrics = out.metrics;
  metrics = training_metrics(training, timeline, platform);
  if (stragglers.any()) // what every synchronous step waits for
    metrics.set(metric::slowest_gpu_speed, stragglers.slowest());
  if (pipelined)
    metrics.set(metric::bubble_fraction, (metrics.at(metric::iteration_time_s) - metrics.breakdown.at("compute_s")) /
                                             metrics.breakdown.at("compute_s"));
  if (pipelined && !shape.graph_pipeline)
    add_pipeline_bubble(metrics, training, stages,
                        params.model.moe.enabled() ? experts_at_mean_load(params, parallel, *cost) : PieceTimes{});
  const MemoryFootprint memory = peak_memory(stages, training);
  if (params.model.moe.enabled())
    add_moe_metrics(metrics, training, timeline);
  // MFU: model FLOPs per GPU-second over the dtype's dense peak.
  metrics.set(metric::mfu, metrics.at(metric::tflops_per_gpu) * 1e12 / device.peak(params.model.dtype));
  if (pipelined)
    add_stage_breakdown(metrics, params, training, parallel);
  if (params.tokens > 0) // the budget at this step's rate
    metrics.set(metric::time_to_train_s, params.tokens / metrics.at(metric::tokens_per_s));
  metrics.set(metric::peak_memory_bytes, memory.total());
  metrics.set(metric::memory_capacity_bytes, device.memory_bytes);
  metrics.set_flag(metric::fits_in_memory, memory.total() <= (1 - params.memory_reserve) * device.memory_bytes);
  for (const auto& [k, v] : memory.breakdown())
    metrics.breakdown[k] = v;
  // Kept back from the GPU's memory (workload.memory_reserve): the CUDA context, NCCL's buffers and the caching
  // allocator's fragmentation, which the model does not count term by term.
  metrics.breakdown["memory_reserve_bytes"] = params.memory_reserve * device.memory_bytes;
  if (env.trace)
    out.trace_json = training_trace(training, timeline, platform);
  out.summary = summary_text(params, env, training, metrics);
  out.warnings = run_warnings(params, env, plan.one_replica, gpus, parallel);
  return out;
}

CS_REGISTER_WORKLOAD(TrainingWorkload, "transformer-training",
                     "a transformer or layer graph trained with data, tensor and pipeline parallelism");

} // namespace cs
