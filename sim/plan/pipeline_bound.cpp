#include "sim/plan/pipeline_bound.hpp"

#include "base/registry.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "policies/pipeline/schedule_timing.hpp"
#include "workloads/training/stage_costs.hpp"

#include <algorithm>

namespace cs {

double pipeline_compute_bound(const TrainingParams& params, const Plan& plan, const PieceTimes& experts,
                              const KernelCostModel& cost, const PlatformSpec& platform, int microbatches)
{
  // Without a pipeline, 1F1B's order: one device's passes add up the same in any order.
  auto schedule = Registry<PipelineSchedule>::instance().create(plan.schedule.empty() ? "1f1b" : plan.schedule);
  const int pp = plan.parallel.pp, v = plan.parallel.vpp;
  // The passes are priced without the data-parallel reductions and gathers beside them, which only slow them; the
  // stages' memory is not asked for.
  StageShape shape;
  shape.parallel = plan.parallel;
  shape.map = schedule->stage_map(pp, v);
  const StageSet set = transformer_stages(params, cost, platform, shape);
  // `experts` is zero where the planner leaves the routed experts out of the bound.
  const std::vector<StageCost> stage = with_routed_experts(set, experts);
  const auto order = schedule->order(pp, v, microbatches);
  // Each device's optimizer step over what it updates (ZeRO: its shard), as the builder prices it.
  const FrameworkProfile& fw = params.framework;
  std::vector<double> optimizer(pp);
  for (int d = 0; d < pp; ++d) {
    const double weights = optimizer_parameters(set, d, plan.parallel, plan.parallel.zero >= 1 && plan.parallel.dp > 1);
    optimizer[d] = pass_cost(cost, {optimizer_kernel(weights, fw)}, fw.kernel_gap_s).seconds;
  }
  // Two iterations, as the planner's runs measure the second: a device starts the next one after its own optimizer
  // step, so one device's drain overlaps another's fill and the period is shorter than one iteration from idle.
  const auto ends = schedule_iteration_ends(
      order, set.map, [&stage](int vs, Pass pass) { return stage[vs].seconds(static_cast<int>(pass)); }, optimizer, 2);
  return ends[1] - ends[0];
}

} // namespace cs
