#include "sim/plan/plan_twins.hpp"

#include "workloads/training/training_workload.hpp"

namespace cs {

// The plan's model on one stage (its segments: the embedding, the layers and the head), one data-parallel rank.
StageSet one_stage(TrainingParams w, const KernelCostModel& cost, const PlatformSpec& platform, StageShape* used)
{
  w.parallel.pp = 1;
  w.parallel.vpp = 1;
  w.parallel.stage_layers.clear();
  w.parallel.dp = 1;
  StageShape shape;
  shape.parallel = w.parallel.layout(static_cast<long long>(w.parallel.tp) * w.parallel.cp);
  if (used)
    *used = shape;
  return transformer_stages(w, cost, platform, shape);
}

// Whether the plan's selective recomputation reruns nothing: its modules match no kernel of this model (the
// attention core where a fused kernel keeps no scores), so every piece costs what it costs without it, and the FLOP
// counts agree. The step is then the one without recomputation; only a memory estimate may differ, which the timing
// does not read. The MoE layer's own module also repeats its all-to-alls, so it never qualifies.
bool recomputes_nothing(const Scenario& s, const StageSet& priced, const KernelCostModel& cost,
                        const PlatformSpec& platform)
{
  const TrainingParams& w = workload_as<TrainingWorkload>(s).params;
  if (w.model.recompute != Recompute::SELECTIVE || w.model.recomputes("moe"))
    return false;
  TrainingParams bare = w;
  bare.model.recompute = Recompute::NONE;
  bare.model.recompute_modules.clear();
  const StageSet& a = priced;
  const StageSet b = one_stage(bare, cost, platform, nullptr);
  const auto& x = a.stages.front().segments;
  const auto& y = b.stages.front().segments;
  if (x.size() != y.size() || a.model_flops_per_iteration != b.model_flops_per_iteration ||
      a.hardware_flops_per_iteration != b.hardware_flops_per_iteration)
    return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i].forward_s != y[i].forward_s || x[i].backward_s != y[i].backward_s || x[i].weight_s != y[i].weight_s ||
        x[i].shared_forward_s != y[i].shared_forward_s || x[i].shared_backward_s != y[i].shared_backward_s)
      return false;
  return true;
}

} // namespace cs
