// What a training workload refuses before it runs: shapes the cluster cannot hold and splits the builders cannot make.
#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/layer_graph.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "workloads/training/training_workload.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <tuple>

namespace cs {

std::string pipeline_schedule_name(const TrainingParams& params, const PolicySelection& policies)
{
  return policies.name("pipeline", params.parallel.vpp > 1 ? "interleaved-1f1b" : "1f1b");
}

namespace {

// Of the keys a check involves, the first one a --set override gave (so the error blames what the user just
// typed), else the last one.
std::string blamed_key(const WorkloadEnv& env, std::initializer_list<const char*> keys)
{
  for (const char* key : keys)
    if (env.source->from_override(key))
      return key;
  return *(keys.end() - 1);
}

// A layer graph is cut into one stage per device.
void check_layer_graph(const WorkloadEnv& env, const TrainingParams& params)
{
  const auto& p = params.parallel;
  const auto& graph = params.model.graph;
  if (p.vpp != 1)
    throw env.error_at("workload.parallel.vpp", "a layer graph runs one stage per device (vpp = 1)");
  if (params.model.mtp_depth > 0)
    throw env.error_at("workload.model.mtp_depth", "multi-token prediction needs a transformer, not a layer graph");
  if (p.pp > static_cast<int>(graph.size()))
    throw env.error_at("workload.parallel.pp",
                       fmt::format("pp = {} is more stages than the graph's {} layers", p.pp, graph.size()));
  // A kernel layer must be one the cost stack can price on this device (units for its dtype, room for its tiles):
  // ask the stack itself, with a neutral profile, before the run would.
  const DeviceProfile neutral;
  const auto stack = make_cost_model(*env.device, neutral);
  for (std::size_t i = 0; i < graph.size(); ++i)
    if (graph[i].kernel)
      try {
        stack->predict(*graph[i].kernel);
      } catch (const std::invalid_argument& e) {
        throw env.error_at(fmt::format("workload.model.graph[{}].kernel", i), e.what());
      }
  if (Registry<PipelineSchedule>::instance().create(pipeline_schedule_name(params, *env.policies))->runs_stage_dags()) {
    const auto branch = layer_branches(graph);
    const int branches = branch.empty() ? 0 : *std::max_element(branch.begin(), branch.end()) + 1;
    if (p.pp < branches)
      throw env.error_at("workload.parallel.pp", fmt::format("the layer graph has {} branches; graph-pipeline needs pp "
                                                             ">= {}",
                                                             branches, branches));
  }
}

void check_tensor_parallel(const WorkloadEnv& env, const TrainingParams& params)
{
  const auto& p = params.parallel;
  const ClusterParams& cluster = *env.cluster;
  const bool graph = !params.model.graph.empty();
  if (p.sequence_parallel && p.tp == 1)
    throw env.error_at("workload.parallel.sequence_parallel", "sequence parallelism splits the TP group's tokens: it "
                                                              "needs tp > 1");
  if (p.tp > cluster.gpus_per_node || cluster.gpus_per_node % p.tp != 0)
    throw env.error_at("workload.parallel.tp",
                       fmt::format("tp = {} must divide a node's {} GPUs (tensor parallelism stays inside a node)",
                                   p.tp, cluster.gpus_per_node));
  // Transformer Engine refuses a userbuffers overlap that would leave its GEMM no SMs.
  for (const auto& [layer, overlap] : params.framework.tp_overlap)
    if (overlap.num_sm >= env.device->sms && env.device->sms > 0)
      throw env.error_at(("workload.framework.tp_overlap." + layer + ".num_sm").c_str(),
                         fmt::format("{}'s num_sm = {} leaves its GEMM none of {}'s {} SMs", layer, overlap.num_sm,
                                     env.device->name, env.device->sms));
  if (graph)
    return;
  if (const std::string problem = attention_kind_of(params.model).tp_problem(params.model, p.tp); !problem.empty())
    throw env.error_at("workload.parallel.tp", problem);
  if (params.model.ffn % p.tp != 0)
    throw env.error_at("workload.parallel.tp",
                       fmt::format("tp = {} must divide the ffn size ({})", p.tp, params.model.ffn));
}

void check_pipeline(const WorkloadEnv& env, const TrainingParams& params, int dp)
{
  const auto& p = params.parallel;
  const bool graph = !params.model.graph.empty();
  const std::string name = pipeline_schedule_name(params, *env.policies);
  auto schedule = Registry<PipelineSchedule>::instance().create(name);
  const int v = schedule->chunks(p.vpp);
  if (p.vpp > 1 && v == 1)
    throw env.error_at("workload.parallel.vpp",
                       fmt::format("vpp = {} needs policies.pipeline: interleaved-1f1b", p.vpp));
  if (const std::string problem = schedule->devices_problem(p.pp); !problem.empty())
    throw env.error_at(blamed_key(env, {"workload.parallel.pp", "policies.pipeline"}), problem);
  // The stages of one copy of the model: DualPipe's two copies are cut alike, so stage_layers lists one.
  const int stages = p.pp * v / schedule->stage_map(p.pp, v).chains();
  const bool copies = stages != p.pp * v;
  const std::string stages_are =
      copies ? fmt::format("pp = {} (a copy of the model's)", stages) : fmt::format("pp x vpp = {} x {}", p.pp, v);
  const std::string entries =
      copies ? fmt::format("pp = {} (a copy of the model's)", stages) : fmt::format("pp x vpp = {}", stages);
  const int slots = p.pipeline_slots(params.model.layers);
  const bool accounted = slots != params.model.layers;
  if (accounted && (graph || !p.stage_layers.empty() || p.partition != StagePartition::EVEN))
    throw env.error_at(p.account_for_embedding ? "workload.parallel.account_for_embedding"
                                               : "workload.parallel.account_for_loss",
                       "the embedding's and the loss's slots go with the even partition of a transformer, without "
                       "stage_layers (write their stages' layers there instead)");
  if (!p.stage_layers.empty()) {
    int sum = 0;
    for (int l : p.stage_layers)
      sum += l;
    const bool counts = std::all_of(p.stage_layers.begin(), p.stage_layers.end(), [](int l) { return l >= 0; });
    if (!p.pipeline_layout.empty() &&
        (graph || static_cast<int>(p.stage_layers.size()) != stages || sum != params.model.layers))
      throw env.error_at("workload.parallel.pipeline_layout",
                         fmt::format("the layout has {} stages and {} decoder layers (t); {} stages of "
                                     "the {} transformer layers",
                                     p.stage_layers.size(), sum, entries, params.model.layers));
    if (graph || static_cast<int>(p.stage_layers.size()) != stages || !counts || sum != params.model.layers)
      throw env.error_at("workload.parallel.stage_layers",
                         fmt::format("stage_layers needs {} entries of 0 or more layers summing to the {} "
                                     "transformer layers",
                                     entries, params.model.layers));
  }
  if (!graph && p.stage_layers.empty() && p.partition == StagePartition::EVEN && slots % stages != 0)
    throw env.error_at("workload.model.layers",
                       fmt::format("{} layers{} do not divide into {} stages (parallel.partition: "
                                   "balanced allows uneven stages)",
                                   params.model.layers, accounted ? " and the embedding's and loss's slots" : "",
                                   stages_are));
  if (!graph && slots < stages)
    throw env.error_at("workload.model.layers",
                       fmt::format("{} layers are fewer than the {} stages", params.model.layers, stages_are));
  if (schedule->overlaps_passes() && p.zero >= 3)
    throw env.error_at(blamed_key(env, {"policies.pipeline", "workload.parallel.zero"}),
                       fmt::format("{} overlaps passes, which ZeRO-3's per-layer parameter gathers (issued in pass "
                                   "order) are not modelled with: use zero 0, 1 or 2",
                                   name));
  // Whether the schedule runs this shape, asked once per shape: a planner checks tens of thousands of plans, and
  // building an order only to see that it can be built was a tenth of a 2,048-GPU search's bounding.
  static std::map<std::tuple<std::string, int, int, int>, std::string> verdicts;
  const auto shape = std::make_tuple(name, p.pp, v, params.batch.global / (dp * params.batch.micro));
  auto verdict = verdicts.find(shape);
  if (verdict == verdicts.end()) {
    std::string problem;
    try {
      schedule->order(p.pp, v, std::get<3>(shape));
    } catch (const std::invalid_argument& e) {
      problem = e.what();
    }
    verdict = verdicts.emplace(shape, problem).first;
  }
  if (!verdict->second.empty())
    throw env.error_at("workload.batch.global", verdict->second);
}

// HSDP: the replicas of the sharded state divide dp, and there is a sharded state to replicate. Routed experts shard
// over their own expert-data-parallel group, and DualPipe's two copies share theirs: neither is split here.
void check_replicated_shards(const WorkloadEnv& env, const TrainingParams& params, int dp)
{
  const auto& p = params.parallel;
  if (p.dp_replicate == 1)
    return;
  const char* key = "workload.parallel.dp_replicate";
  if (p.zero < 1)
    throw env.error_at(
        blamed_key(env, {key, "workload.parallel.zero"}),
        fmt::format("dp_replicate = {} replicates ZeRO's shards: it needs zero 1, 2 or 3", p.dp_replicate));
  if (dp % p.dp_replicate != 0)
    throw env.error_at(key, fmt::format("dp_replicate = {} must divide dp = {}", p.dp_replicate, dp));
  if (dp / p.dp_replicate * p.cp < 2)
    throw env.error_at(key, fmt::format("dp_replicate = {} leaves shard groups of one rank (dp {} x cp {}): that is "
                                        "plain data parallelism, zero 0",
                                        p.dp_replicate, dp, p.cp));
  if (params.model.moe.enabled())
    throw env.error_at(key, "dp_replicate with routed experts is not modelled (they shard over their own "
                            "expert-data-parallel group)");
  const auto schedule = Registry<PipelineSchedule>::instance().create(pipeline_schedule_name(params, *env.policies));
  if (p.pp > 1 && schedule->stage_map(p.pp, schedule->chunks(p.vpp)).chains() > 1)
    throw env.error_at(blamed_key(env, {key, "policies.pipeline"}),
                       "dp_replicate under a schedule that runs two copies of the model (dualpipe) is not modelled");
}

// Expert parallelism: an EP group shares a layer's experts, so ep divides the experts and the group's replicas divide
// dp; expert tensor parallelism is the attention's, or 1 (MoE parallel folding: ep / tp replicas per EP group).
void check_experts(const WorkloadEnv& env, const TrainingParams& params, const ParallelLayout& layout)
{
  const auto& p = params.parallel;
  const int dp = layout.dp;
  const MoeParams& moe = params.model.moe;
  if (!moe.enabled()) {
    if (p.ep != 1)
      throw env.error_at("workload.parallel.ep", "expert parallelism needs an MoE model (workload.model.moe.experts)");
    return;
  }
  if (!params.model.graph.empty())
    throw env.error_at("workload.model.moe", "experts replace a transformer's MLP: a layer graph cannot have them");
  if (moe.experts % p.ep != 0)
    throw env.error_at(blamed_key(env, {"workload.model.moe.experts", "workload.parallel.ep"}),
                       fmt::format("{} experts do not divide over ep = {}", moe.experts, p.ep));
  if (p.etp != 0 && p.tp % p.etp != 0)
    throw env.error_at("workload.parallel.etp", fmt::format("etp = {} must divide tp = {} (each group of etp TP ranks "
                                                            "is one expert-parallel rank)",
                                                            p.etp, p.tp));
  if (layout.expert_tp() != p.tp) { // etp < tp: a replica holds tp / etp EP ranks, an EP group whole replicas
    if (!p.sequence_parallel)
      throw env.error_at("workload.parallel.etp", fmt::format("etp = {} under tp = {} needs sequence_parallel (each "
                                                              "group of etp TP ranks routes its own share of the "
                                                              "sequence)",
                                                              p.etp, p.tp));
    if (p.ep % layout.ep_fold() != 0)
      throw env.error_at(blamed_key(env, {"workload.parallel.ep", "workload.parallel.etp"}),
                         fmt::format("with etp = {}, ep = {} must be a multiple of tp / etp = {} (an EP group takes "
                                     "whole replicas)",
                                     p.etp, p.ep, layout.ep_fold()));
  }
  if (p.ep % layout.ep_ranks_per_replica() != 0) // the expert grid folds the CP ranks (each its own EP rank)
    throw env.error_at(blamed_key(env, {"workload.parallel.ep", "workload.parallel.cp"}),
                       fmt::format("with cp = {}, ep = {} must be 1 or a multiple of cp x tp / etp = {} (an EP group "
                                   "takes whole replicas, whose CP ranks are EP ranks of their own)",
                                   layout.cp, p.ep, layout.ep_ranks_per_replica()));
  if (dp % layout.ep_replicas() != 0)
    throw env.error_at(blamed_key(env, {"workload.parallel.dp", "workload.parallel.ep"}),
                       fmt::format("ep = {} must divide the data-parallel degree {} times cp x tp / etp = {} (ep x etp "
                                   "must divide the GPUs of each pipeline stage, dp x cp x tp = {})",
                                   p.ep, dp, layout.ep_ranks_per_replica(),
                                   static_cast<long long>(dp) * layout.cp * p.tp));
  if ((moe.dispatcher == "deepep" || moe.dispatcher == "hybridep") && env.cluster->intra_node.kind == IntraNode::PCIE)
    throw env.error_at(blamed_key(env, {"cluster.intra_node.kind", "workload.model.moe.dispatcher"}),
                       "the " + moe.dispatcher +
                           " dispatcher forwards tokens over NVLink inside a node: it needs nvswitch or nvlink-mesh, "
                           "not pcie");
  // Node-limited routing needs that many nodes in the EP group to choose from.
  if (const int nodes = moe.max_nodes_per_token > 0 ? layout.ep_group_machines(env.cluster->gpus_per_node) : 0;
      moe.max_nodes_per_token > nodes)
    throw env.error_at(
        "workload.model.moe.max_nodes_per_token",
        fmt::format("max_nodes_per_token = {} but an EP group spans {} node(s)", moe.max_nodes_per_token, nodes));
  if (expert_ffn_of(params.model) % layout.expert_tp() != 0 ||
      (moe.shared_experts > 0 && shared_ffn_of(params.model) % p.tp != 0))
    throw env.error_at("workload.parallel.tp", fmt::format("tp = {} must divide the experts' inner size", p.tp));
}

// Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm) and what its argument checks require.
void check_ep_overlap(const WorkloadEnv& env, const TrainingParams& params)
{
  const ParallelParams& p = params.parallel;
  const char* key = "workload.framework.overlap_moe_expert_parallel_comm";
  if (params.framework.delay_wgrad_compute && !params.framework.overlap_moe_expert_parallel_comm)
    throw env.error_at("workload.framework.delay_wgrad_compute",
                       "delaying the experts' weight gradients needs the all-to-all overlap "
                       "(workload.framework.overlap_moe_expert_parallel_comm), as Megatron-Core requires");
  if (!params.framework.overlap_moe_expert_parallel_comm)
    return;
  if (!params.model.moe.enabled() || p.ep <= 1)
    throw env.error_at(key, "the all-to-all overlap needs expert parallelism (an MoE model with ep > 1)");
  if (params.model.moe.dispatcher == "allgather")
    throw env.error_at(key,
                       "the all-to-all overlap runs with the alltoall, deepep or hybridep dispatcher, not allgather");
  if (params.model.recompute == Recompute::FULL)
    throw env.error_at(key, "the all-to-all overlap cannot run with full recomputation (Megatron-Core refuses it)");
  if (p.zero >= 3)
    throw env.error_at(key, "the all-to-all overlap is not modelled with ZeRO-3's per-layer parameter gathers (issued "
                            "in pass order): use zero 0, 1 or 2");
  const std::string schedule = pipeline_schedule_name(params, *env.policies);
  if (p.pp > 1 && (p.vpp <= 1 || schedule != "interleaved-1f1b"))
    throw env.error_at(key, "with pp > 1 the all-to-all overlap needs the interleaved schedule (vpp > 1), as "
                            "Megatron-Core requires: paired plain-1F1B stages would wait on each other's pairs");
  if (p.pp == 1 && schedule != "1f1b")
    throw env.error_at(key, fmt::format("the all-to-all overlap pairs 1F1B's passes; policies.pipeline {} has its own "
                                        "order",
                                        schedule));
}

// Megatron-Core's --moe-shared-expert-overlap and what it requires.
void check_shared_expert_overlap(const WorkloadEnv& env, const TrainingParams& params)
{
  const char* key = "workload.framework.moe_shared_expert_overlap";
  if (!params.framework.moe_shared_expert_overlap)
    return;
  const MoeParams& moe = params.model.moe;
  if (!moe.enabled() || moe.shared_experts == 0)
    throw env.error_at(key, "the shared-expert overlap needs shared experts (workload.model.moe.shared_experts)");
  if (moe.dispatcher == "allgather")
    throw env.error_at(
        key, "the shared-expert overlap runs with the alltoall, deepep or hybridep dispatcher, not allgather");
  if (params.framework.overlap_moe_expert_parallel_comm)
    throw env.error_at(key, "the shared-expert overlap and the all-to-all overlap (combined 1F1B) are not used "
                            "together (Megatron-Bridge's guidance): choose one");
}

// Context parallelism splits every sample's sequence over cp ranks of fused attention.
void check_context_parallel(const WorkloadEnv& env, const TrainingParams& params)
{
  const ParallelParams& parallel = params.parallel;
  const ModelParams& model = params.model;
  if (parallel.cp <= 1)
    return;
  if (!model.graph.empty())
    throw env.error_at("workload.parallel.cp", "context parallelism splits a transformer's sequence: a layer graph "
                                               "has none (cp must be 1)");
  if (model.attention == AttentionCore::MATERIALIZED)
    throw env.error_at("workload.model.attention", "context parallelism needs fused attention (flash, cudnn or "
                                                   "triton), not materialized scores");
  const int chunks = parallel.cp_comm == CpComm::P2P ? 2 * parallel.cp
                                                     : parallel.cp; // ring attention: two chunks a rank (load balance)
  if (model.seq % chunks != 0)
    throw env.error_at("workload.parallel.cp",
                       fmt::format("cp = {} needs the sequence ({}) in {} equal chunks{}", parallel.cp, model.seq,
                                   chunks,
                                   parallel.cp_comm == CpComm::P2P ? " (two a rank, for causal load balancing)" : ""));
  const long long heads_split = static_cast<long long>(parallel.tp) * parallel.cp;
  if (parallel.cp_comm == CpComm::A2A && (model.heads % heads_split != 0 || model.kv() % heads_split != 0))
    throw env.error_at("workload.parallel.cp_comm",
                       fmt::format("a2a splits the heads over tp x cp = {} ranks: it must divide the heads ({}) and "
                                   "the key/value heads ({})",
                                   heads_split, model.heads, model.kv()));
}

} // namespace

void TrainingWorkload::check(const WorkloadEnv& env) const
{
  const ClusterParams& cluster = *env.cluster;
  const auto& p = params.parallel;
  if (cluster.is_cpu_cluster())
    throw env.error_at("workload.kind", "transformer-training needs a GPU cluster (nodes of GPUs), not racks");
  if (!params.model.graph.empty())
    check_layer_graph(env, params);
  check_tensor_parallel(env, params);
  check_context_parallel(env, params);
  const int gpus = cluster.nodes * cluster.gpus_per_node; // bounded when read: at most 2^20
  // 64-bit: user degrees must not wrap to 0
  const long long model_ranks = static_cast<long long>(p.pp) * p.tp * p.cp;
  const std::string cp = p.cp > 1 ? fmt::format(" x cp {}", p.cp) : "";
  if (model_ranks > gpus || gpus % model_ranks != 0)
    throw env.error_at(p.cp > 1 ? "workload.parallel.cp" : "workload.parallel.pp",
                       fmt::format("tp x pp = {} x {}{} does not divide the cluster's {} GPUs", p.tp, p.pp, cp, gpus));
  const int dp = p.dp_on(gpus);
  if (dp * model_ranks > gpus)
    throw env.error_at(
        p.dp > 0 ? "workload.parallel.dp" : "workload.parallel.pp",
        fmt::format("dp x tp x pp = {} x {} x {}{} is larger than the cluster's {} GPUs", dp, p.tp, p.pp, cp, gpus));
  if (static_cast<long long>(dp) * params.batch.micro > params.batch.global ||
      params.batch.global % (dp * params.batch.micro) != 0)
    throw env.error_at(blamed_key(env, {"workload.batch.micro", "workload.parallel.dp", "workload.batch.global"}),
                       fmt::format("global batch {} does not divide into dp ({}) x micro ({}) "
                                   "= {} per step",
                                   params.batch.global, dp, params.batch.micro,
                                   static_cast<long long>(dp) * params.batch.micro));
  check_experts(env, params, p.layout(gpus));
  check_replicated_shards(env, params, dp);
  check_ep_overlap(env, params);
  check_shared_expert_overlap(env, params);
  if (p.vpp > 1 && p.pp == 1)
    throw env.error_at("workload.parallel.vpp", "virtual pipeline chunks (vpp > 1) interleave a pipeline: they need "
                                                "pp > 1");
  // Without pipelining a schedule is only asked whether it runs on one device (DualPipe pairs two at least).
  auto refused_on_one_device = [&] {
    return !Registry<PipelineSchedule>::instance()
                .create(pipeline_schedule_name(params, *env.policies))
                ->devices_problem(1)
                .empty();
  };
  if (p.pp > 1 || p.vpp > 1 || !p.stage_layers.empty() || refused_on_one_device())
    check_pipeline(env, params, dp);
  if (env.device->peak(params.model.dtype) <= 0)
    throw env.error_at("workload.model.dtype",
                       fmt::format("{} has no {} compute units", cluster.device, params.model.dtype));
  if (params.framework.fp8_param_gather && !params.model.fp8)
    throw env.error_at(blamed_key(env, {"workload.model.fp8", "workload.framework.fp8_param_gather"}),
                       "fp8_param_gather keeps the GEMM weights in FP8: it needs an FP8 recipe (workload.model.fp8)");
  if (params.model.fp8 && !params.model.fp8->device_problem(*env.device).empty())
    throw env.error_at("workload.model.fp8", fmt::format("FP8 recipe {}: {}", params.model.fp8->name(),
                                                         params.model.fp8->device_problem(*env.device)));
}

} // namespace cs
