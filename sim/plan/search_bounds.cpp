#include "sim/plan/search_bounds.hpp"

#include "sim/plan/paired_pass_bound.hpp"
#include "sim/plan/zero3_bound.hpp"

#include "base/registry.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace cs {

std::string plan_key(const Plan& plan, int zero)
{
  const ParallelLayout& p = plan.parallel;
  std::string key = fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}", p.dp, p.tp, p.cp, p.pp, p.vpp,
                                p.ep, p.expert_tp(), zero, p.dp_replicate, p.sequence_parallel,
                                static_cast<int>(p.cp_comm), static_cast<int>(p.placement), plan.micro, plan.schedule,
                                static_cast<int>(plan.recompute), plan.fp8, plan.dispatcher);
  for (const auto& m : plan.recompute_modules)
    key += " " + m;
  key += " |";
  for (int l : plan.stage_layers)
    key += " " + std::to_string(l);
  return key;
}

namespace {

// What the stages' prices depend on: the model's split (not ZeRO below 3, nor the data-parallel group, which the
// bounds leave out but for the optimizer's shard), the micro-batch, recomputation, FP8 and the schedule's stage map.
std::string stage_key(const Plan& plan) { return plan_key(plan, plan.parallel.zero >= 3 ? 3 : 0); }

// What a schedule's order depends on: the schedule (1F1B's without a pipeline), pp, vpp and the microbatches.
OrderKey order_key(const Plan& plan, int microbatches)
{
  return {plan.schedule.empty() ? "1f1b" : plan.schedule, plan.parallel.pp, plan.parallel.vpp, microbatches};
}

// What price_stage_pieces reads of a plan (the rest of the scenario is the search's base): not dp, pp, ep, the
// schedule or the partition.
std::string pieces_key(const Plan& plan)
{
  const ParallelLayout& p = plan.parallel;
  std::string key = fmt::format("{} {} {} {} {} {} {} {} {}", p.tp, p.cp, static_cast<int>(p.cp_comm),
                                p.sequence_parallel, static_cast<int>(p.placement), plan.micro,
                                static_cast<int>(plan.recompute), plan.fp8, plan.dispatcher);
  for (const auto& m : plan.recompute_modules)
    key += " " + m;
  return key;
}

} // namespace

const StageSet& SearchBounds::stages(const TrainingParams& params, const Plan& plan)
{
  auto& set = stages_[stage_key(plan)];
  if (!set) {
    const std::string key = pieces_key(plan);
    auto it = pieces_.find(key);
    if (it == pieces_.end())
      it = pieces_.emplace(key, price_stage_pieces(params, cost_, platform_, plan.parallel)).first;
    set = std::make_unique<StageSet>(bound_stages(params, plan, cost_, platform_, &it->second));
  }
  return *set;
}

double SearchBounds::alltoall(const TrainingParams& params, const Plan& plan)
{
  // The all-to-all at an even load depends on where the EP group's ranks sit, the micro-batch and the dispatcher.
  const ParallelLayout& p = plan.parallel;
  const auto key = std::make_tuple(p.dp, p.tp, p.cp, p.pp, p.ep, p.expert_tp(), static_cast<int>(p.placement),
                                   plan.micro, plan.dispatcher);
  auto it = alltoalls_.find(key);
  if (it == alltoalls_.end())
    it = alltoalls_.emplace(key, even_alltoall_seconds(params, plan, platform_)).first;
  return it->second;
}

const std::vector<std::vector<PipelineOp>>& SearchBounds::order(const Plan& plan, int microbatches)
{
  const OrderKey key = order_key(plan, microbatches);
  auto it = orders_.find(key);
  if (it == orders_.end())
    it = orders_
             .emplace(key, Registry<PipelineSchedule>::instance()
                               .create(std::get<0>(key))
                               ->order(plan.parallel.pp, plan.parallel.vpp, microbatches))
             .first;
  return it->second;
}

const PassCounts& SearchBounds::counts(const TrainingParams& params, const Plan& plan, int microbatches)
{
  const OrderKey key = order_key(plan, microbatches);
  auto it = counts_.find(key);
  if (it == counts_.end())
    it = counts_.emplace(key, pass_counts(order(plan, microbatches), stages(params, plan).map)).first;
  return it->second;
}

std::vector<double> SearchBounds::pair_idle(const TrainingParams& params, const Plan& plan, const PieceTimes& experts,
                                            int microbatches)
{
  const double a = alltoall(params, plan);
  if (!pairs_wait(params, plan, whole_alltoalls_, a) || plan.schedule.empty() ||
      !Registry<PipelineSchedule>::instance().create(plan.schedule)->overlaps_passes())
    return {};
  const auto key = std::make_tuple(plan.schedule, plan.parallel.pp, plan.parallel.vpp, microbatches);
  auto it = pairs_.find(key);
  if (it == pairs_.end())
    it = pairs_.emplace(key, pair_counts(order(plan, microbatches), stages(params, plan).map)).first;
  const StageSet& set = stages(params, plan);
  std::vector<double> out(it->second.size(), 0.0);
  for (std::size_t d = 0; d < out.size(); ++d)
    for (const auto& [stage_pair, count] : it->second[d]) {
      // The experts unslowed: an idle and a work no more than the timeline's, which slows them beside the all-to-alls.
      const auto idle_key =
          std::make_tuple(&set, stage_pair.first, stage_pair.second, experts.forward, experts.backward, a);
      auto found = pair_idle_.find(idle_key);
      if (found == pair_idle_.end())
        found = pair_idle_
                    .emplace(idle_key, paired_idle_seconds(set.stages[stage_pair.first], set.stages[stage_pair.second],
                                                           experts.forward, experts.backward, a))
                    .first;
      out[d] += count * found->second;
    }
  return out;
}

double SearchBounds::gathers(const TrainingParams& params, const Plan& plan, int microbatches)
{
  if (plan.parallel.zero < 3)
    return 0.0;
  const std::string key = fmt::format("{} m{}", stage_key(plan), microbatches); // ZeRO-3 is in the stage key
  auto it = gathers_.find(key);
  if (it == gathers_.end()) {
    const auto per_device =
        zero3_gather_seconds(params, plan, stages(params, plan), platform_, counts(params, plan, microbatches));
    it =
        gathers_.emplace(key, per_device.empty() ? 0.0 : *std::min_element(per_device.begin(), per_device.end())).first;
  }
  return it->second;
}

const ChainBound* SearchBounds::chain(const TrainingParams& params, const Plan& plan, int microbatches)
{
  const OrderKey key = order_key(plan, microbatches);
  auto shape = chains_.find(key);
  if (shape == chains_.end())
    shape = chains_.emplace(key, chain_shape(order(plan, microbatches), stages(params, plan).map)).first;
  if (!shape->second)
    return nullptr;
  // ZeRO-1 and ZeRO-2 gather alike after the step; the stage key has the rest of what the gathers depend on.
  const std::string bound_key =
      fmt::format("{} z{} m{}", stage_key(plan), plan.parallel.zero == 2 ? 1 : plan.parallel.zero, microbatches);
  auto it = chain_bounds_.find(bound_key);
  if (it == chain_bounds_.end())
    it = chain_bounds_
             .emplace(bound_key,
                      ChainBound{*shape->second, zero12_gather_seconds(params, plan, stages(params, plan), platform_)})
             .first;
  return &it->second;
}

double SearchBounds::work(const TrainingParams& params, const Plan& plan, const PieceTimes& experts, int microbatches)
{
  const double work = pipeline_work_bound(
      params, plan, stages(params, plan), experts, cost_, counts(params, plan, microbatches), alltoall(params, plan),
      pair_idle(params, plan, experts, microbatches), chain(params, plan, microbatches));
  return std::max(work, gathers(params, plan, microbatches));
}

double SearchBounds::timeline(const TrainingParams& params, const Plan& plan, const PieceTimes& experts,
                              int microbatches)
{
  // The experts' price follows from the stage key's fields (tp, micro-batch, recomputation, ep, etp, cp, FP8).
  // ZeRO-1 and ZeRO-2 shard the optimizer alike, the one thing of ZeRO below 3 the timeline sees.
  const int zero = plan.parallel.zero == 2 ? 1 : plan.parallel.zero;
  const std::string key = fmt::format("{} z{} m{}", stage_key(plan), zero, microbatches);
  auto it = timelines_.find(key);
  if (it == timelines_.end())
    it = timelines_
             .emplace(key, std::max(pipeline_compute_bound(params, plan, stages(params, plan), experts, cost_,
                                                           platform_, microbatches, alltoall(params, plan),
                                                           whole_alltoalls_, &order(plan, microbatches)),
                                    gathers(params, plan, microbatches)))
             .first;
  return it->second;
}

} // namespace cs
