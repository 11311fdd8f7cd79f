#include "sim/plan/plan_enumeration.hpp"

#include "base/registry.hpp"
#include "models/parallel/parallel_layout.hpp"
#include "models/transformer/attention_kind.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "workloads/training/training_workload.hpp"

#include <string>
#include <utility>

namespace cs {

namespace {

const TrainingParams& training_of(const Scenario& s) { return workload_as<TrainingWorkload>(s).params; }

// Every registered schedule that can run pp stages of `layers` layers over `microbatches` (a layer at least a chunk),
// with its chunks per device
// (2 for an interleaving schedule); a schedule whose order equals one already listed (the graph pipeline on a chain
// is 1F1B) is left out.
std::vector<std::pair<std::string, int>> registered_schedules(int pp, int microbatches, int layers)
{
  std::vector<std::pair<std::string, int>> out;
  std::vector<std::vector<std::vector<PipelineOp>>> orders;
  const auto& registry = Registry<PipelineSchedule>::instance();
  for (const auto& name : registry.names()) {
    auto schedule = registry.create(name);
    const int v = schedule->chunks(2);
    // A layer at least a stage of each copy of the model; uneven chunks are the balanced partition's (DeepSeek-V3:
    // 61 layers, 32 chunks).
    if (v > 1 && layers < schedule->stage_map(pp, v).chain_length())
      continue;
    std::vector<std::vector<PipelineOp>> order;
    try {
      order = schedule->order(pp, v, microbatches);
    } catch (const std::invalid_argument&) {
      continue;
    }
    auto same = [&](const std::vector<std::vector<PipelineOp>>& o) {
      if (o.size() != order.size())
        return false;
      for (std::size_t d = 0; d < o.size(); ++d) {
        if (o[d].size() != order[d].size())
          return false;
        for (std::size_t i = 0; i < o[d].size(); ++i)
          if (o[d][i].pass != order[d][i].pass || o[d][i].microbatch != order[d][i].microbatch ||
              o[d][i].chunk != order[d][i].chunk)
            return false;
      }
      return true;
    };
    if (std::any_of(orders.begin(), orders.end(), same))
      continue;
    orders.push_back(order);
    out.emplace_back(name, v);
  }
  return out;
}

// (ep, etp) for an MoE model ({1, tp} for a dense one): ep a power of two dividing the experts, etp every divisor of tp
// (below tp, MoE parallel folding: tp / etp EP ranks per TP group). A replica's cp x tp / etp ranks are EP ranks of
// their own, so ep is a multiple of that and the ep / (cp x tp / etp) replicas of an EP group divide dp.
std::vector<std::pair<int, int>> expert_degrees(const ModelParams& model, int dp, int tp, int cp)
{
  std::vector<std::pair<int, int>> out{{1, tp}};
  for (int ep = 2; model.moe.enabled() && ep <= dp * tp * cp && ep <= model.moe.experts; ep *= 2) {
    if (model.moe.experts % ep != 0)
      continue;
    for (int etp = tp; etp >= 1; --etp) {
      ParallelLayout l;
      l.tp = tp;
      l.cp = cp;
      l.ep = ep;
      l.etp = etp;
      const int fold = l.ep_ranks_per_replica();
      if (tp % etp == 0 && ep % fold == 0 && ep / fold <= dp && dp % (ep / fold) == 0)
        out.emplace_back(ep, etp);
    }
  }
  return out;
}

// The context-parallel degrees a search tries: 1, and for sequences of 8K tokens or more the powers of two whose ring
// chunks (2 x cp of them) divide the sequence, up to 16 (an MoE model's CP ranks are EP ranks of their own).
std::vector<int> context_degrees(const ModelParams& model, int gpus)
{
  std::vector<int> out{1};
  for (int cp = 2; model.seq >= 8192 && cp <= 16 && cp <= gpus; cp *= 2)
    if (model.seq % (2 * cp) == 0)
      out.push_back(cp);
  return out;
}

// None, selective and full recomputation. Selective reruns the scenario's modules (default: the attention core), or,
// searched, each set of Megatron-Core's recompute modules that can differ for this model: the norms, the MLP, both;
// and for MoE models the experts' activation, with the norms, and with MLA's up projections (DeepSeek-V3's recipe);
// for dense models with fused attention, torchtitan's op-level policy.
std::vector<std::pair<Recompute, std::vector<std::string>>> recompute_choices(const ModelParams& model, bool search)
{
  using Modules = std::vector<std::string>;
  std::vector<std::pair<Recompute, Modules>> out{{Recompute::NONE, {}}};
  if (!search) {
    out.push_back(
        {Recompute::SELECTIVE, model.recompute == Recompute::SELECTIVE ? model.recompute_modules : Modules{}});
  } else {
    for (const Modules& m : {Modules{"core_attn"}, Modules{"layernorm"}, Modules{"mlp"}, Modules{"layernorm", "mlp"}})
      out.push_back({Recompute::SELECTIVE, m});
    if (model.moe.enabled()) {
      out.push_back({Recompute::SELECTIVE, {"moe_act"}});
      out.push_back({Recompute::SELECTIVE, {"layernorm", "moe_act"}});
      out.push_back({Recompute::SELECTIVE, {"layernorm", "moe"}}); // the whole MoE layer, its all-to-alls too
      if (attention_kind_of(model).name() == "mla")
        out.push_back({Recompute::SELECTIVE, {"layernorm", "mla_up_proj", "moe_act"}});
    } else if (attention_kind_of(model).name() != "mla" && model.attention != AttentionCore::MATERIALIZED) {
      out.push_back({Recompute::SELECTIVE, {"op_sac"}}); // torchtitan's op-level policy, for its dense blocks
    }
  }
  out.push_back({Recompute::FULL, {}});
  return out;
}

// `plan`, and with `hsdp` (a dense plan with ZeRO and one copy of the model) its HSDP variants: shard groups of the
// replicas one node holds of stage 0, then twice as many, while they are fewer than dp (training_checks.cpp's rules).
void push_with_shard_groups(std::vector<Plan>& out, Plan plan, bool hsdp, int gpus_per_node)
{
  out.push_back(plan);
  const ParallelLayout& p = plan.parallel;
  if (!hsdp || p.zero < 1 || p.ep > 1 || p.dp < 2 || plan.dispatcher != "" ||
      (!plan.schedule.empty() &&
       Registry<PipelineSchedule>::instance().create(plan.schedule)->stage_map(p.pp, p.vpp).chains() > 1))
    return;
  const auto group = p.dp_group(0);
  int shard = 0; // stage 0's replicas on the first node
  for (int host : group)
    shard += host / gpus_per_node == group[0] / gpus_per_node ? 1 : 0;
  for (; shard < p.dp; shard *= 2) {
    if (p.dp % shard != 0 || shard * p.cp < 2)
      continue;
    plan.parallel.dp_replicate = p.dp / shard;
    out.push_back(plan);
  }
}

} // namespace

std::vector<Plan> enumerate_plans(const Scenario& base, int gpus, const std::vector<std::string>& fp8,
                                  bool search_recompute_modules, bool search_placement,
                                  const std::vector<std::string>& dispatchers, bool search_hsdp)
{
  const ModelParams& model = training_of(base).model;
  // A dense model has no dispatcher to choose; an MoE model keeps its own unless told which to try.
  const std::vector<std::string> dispatch = !model.moe.enabled()  ? std::vector<std::string>{""}
                                            : dispatchers.empty() ? std::vector<std::string>{model.moe.dispatcher}
                                                                  : dispatchers;
  const auto recomputations = recompute_choices(model, search_recompute_modules);
  const Placement own_order = training_of(base).parallel.placement;
  const CpComm cp_comm = training_of(base).parallel.cp_comm; // how the framework exchanges keys (not searched)
  const Placement other_order = other_placement(own_order);
  const int node_gpus = std::min(base.cluster.gpus_per_node, gpus);
  std::vector<Plan> out;
  for (int tp = 1; tp <= node_gpus; tp *= 2) {
    if (node_gpus % tp != 0 || !attention_kind_of(model).tp_problem(model, tp).empty() || model.ffn % tp != 0)
      continue;
    for (int cp : context_degrees(model, gpus / tp))
      for (int pp = 1; pp <= gpus / (tp * cp) && pp <= model.layers; ++pp) {
        if (gpus % (tp * cp) != 0 || (gpus / (tp * cp)) % pp != 0)
          continue;
        const int dp = gpus / (tp * cp * pp);
        for (int micro = 1; micro <= 32; micro *= 2) {
          const long long step = static_cast<long long>(dp) * micro; // 64-bit: dp x micro must not wrap to 0
          if (step > training_of(base).batch.global || training_of(base).batch.global % step != 0)
            continue;
          const int microbatches = static_cast<int>(training_of(base).batch.global / step);
          const auto schedules = pp == 1 ? std::vector<std::pair<std::string, int>>{{"", 1}}
                                         : registered_schedules(pp, microbatches, model.layers);
          for (const auto& [schedule, vpp] : schedules) {
            // Overlapped pairs are not modelled with ZeRO-3's gathers (training_checks.cpp).
            const bool pairs =
                !schedule.empty() && Registry<PipelineSchedule>::instance().create(schedule)->overlaps_passes();
            const int max_zero = dp == 1 ? 0 : pairs ? 2 : 3;
            for (const auto& [recompute, modules] : recomputations)
              for (int zero = 0; zero <= max_zero; ++zero)
                for (const auto& [ep, etp] : expert_degrees(model, dp, tp, cp)) {
                  Plan plan;
                  plan.parallel.ep = ep;
                  plan.parallel.etp = etp;
                  plan.parallel.dp = dp;
                  plan.parallel.tp = tp;
                  plan.parallel.cp = cp;
                  plan.parallel.pp = pp;
                  plan.parallel.vpp = vpp;
                  plan.micro = micro;
                  plan.parallel.zero = zero;
                  plan.parallel.sequence_parallel = tp > 1;
                  plan.parallel.cp_comm = cp_comm;
                  plan.schedule = schedule;
                  plan.recompute = recompute;
                  plan.recompute_modules = modules;
                  for (const std::string& recipe : fp8)
                    for (const std::string& dispatcher : dispatch) {
                      plan.fp8 = recipe;
                      plan.dispatcher = dispatcher;
                      plan.parallel.placement = own_order;
                      push_with_shard_groups(out, plan, search_hsdp, base.cluster.gpus_per_node);
                      // Megatron-LM runs either order (--use-tp-pp-dp-mapping); they differ only with a pipeline.
                      if (search_placement && pp > 1) {
                        plan.parallel.placement = other_order;
                        push_with_shard_groups(out, plan, search_hsdp, base.cluster.gpus_per_node);
                      }
                    }
                }
          }
        }
      }
  }
  return out;
}

} // namespace cs
