// The bounds of one planner search, with what its plans share (stages, schedule orders, all-to-alls) priced once.
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/pass_cost.hpp"
#include "platform/platform_spec.hpp"
#include "sim/plan/pipeline_bound.hpp"
#include "sim/plan/planner.hpp"
#include "workloads/training/stage_costs.hpp"
#include "workloads/training/training_params.hpp"

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace cs {

/** (schedule, pp, vpp, microbatches): what a schedule's order, and what is counted off it, depend on. */
using OrderKey = std::tuple<std::string, int, int, int>;

/** A text key of everything in `plan` but its bounds and results, with `zero` standing for its ZeRO stage (a
 *  caller folds together the stages it cannot tell apart). */
std::string plan_key(const Plan& plan, int zero);

/** Prices pipeline_work_bound for every plan a search keeps and pipeline_compute_bound (the timeline) only for those
 *  the best-first search reaches, caching what plans have in common. `params` are always the plan's own (the base
 *  scenario reshaped to it). */
class SearchBounds {
public:
  /** `whole_alltoalls`: the scenario's MoE policy sends its all-to-alls whole (pipeline_compute_bound). */
  SearchBounds(const KernelCostModel& cost, const PlatformSpec& platform, bool whole_alltoalls = false)
      : cost_(cost), platform_(platform), whole_alltoalls_(whole_alltoalls)
  {}

  /** The cheap bound (no timeline); both bounds take ZeRO-3's gathers into account where they exceed them. */
  double work(const TrainingParams& params, const Plan& plan, const PieceTimes& experts, int microbatches);
  /** The timeline bound, never below work() for the same plan. */
  double timeline(const TrainingParams& params, const Plan& plan, const PieceTimes& experts, int microbatches);

private:
  const StageSet& stages(const TrainingParams& params, const Plan& plan);
  double alltoall(const TrainingParams& params, const Plan& plan);
  const PassCounts& counts(const TrainingParams& params, const Plan& plan, int microbatches);
  /** Per device, the idle of its paired ops beside each other's all-to-alls (empty where pairs_wait is false). */
  std::vector<double> pair_idle(const TrainingParams& params, const Plan& plan, const PieceTimes& experts,
                                int microbatches);
  /** ZeRO-3: the least any device's communication stream spends on parameter gathers (zero3_gather_seconds); else 0. */
  double gathers(const TrainingParams& params, const Plan& plan, int microbatches);

  const KernelCostModel& cost_;
  const PlatformSpec& platform_;
  bool whole_alltoalls_ = false;
  // All looked up, never iterated (long string keys with long common prefixes: hashed rather than compared).
  std::unordered_map<std::string, std::unique_ptr<StageSet>> stages_; // by the plan's shape (stage_key)
  std::map<std::string, StagePieces> pieces_; // by what prices them (pieces_key): far fewer than the shapes
  std::map<OrderKey, PassCounts> counts_;     // by (schedule, pp, vpp, microbatches): order_key
  std::map<std::tuple<std::string, int, int, int>, PairCounts> pairs_; // by the plan's own schedule, pp, vpp, m
  std::map<OrderKey, std::vector<std::vector<PipelineOp>>> orders_;
  const std::vector<std::vector<PipelineOp>>& order(const Plan& plan, int microbatches);
  std::map<OrderKey, std::optional<ChainShape>> chains_;
  /** pipeline_work_bound's chain bound where the plan's order runs as a chain; else null. */
  const ChainBound* chain(const TrainingParams& params, const Plan& plan, int microbatches);
  std::unordered_map<std::string, ChainBound> chain_bounds_; // by the orders' key, the stage key and ZeRO
  // paired_idle_seconds by (stages, forward's stage, backward's stage, experts forward and backward, all-to-all)
  std::map<std::tuple<const StageSet*, int, int, double, double, double>, double> pair_idle_;
  // by layout, micro-batch and dispatcher
  std::map<std::tuple<int, int, int, int, int, int, int, int, std::string>, double> alltoalls_;
  std::unordered_map<std::string, double> timelines_; // by the stage key, ZeRO and the microbatches
  std::unordered_map<std::string, double> gathers_;   // by the stage key and the microbatches
};

} // namespace cs
