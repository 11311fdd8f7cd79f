// Which of the planner's plans simulate to the same step, so that one simulation times them all.
#pragma once

#include "platform/platform_spec.hpp"
#include "sim/scenario/scenario.hpp"
#include "workloads/training/stage_costs.hpp"

namespace cs {

class KernelCostModel;

/** `w`'s model on one pipeline stage (its segments: the embedding, the layers and the head) for one data-parallel
 *  rank; `used`, when given, receives the stage shape it was priced at. */
StageSet one_stage(TrainingParams w, const KernelCostModel& cost, const PlatformSpec& platform, StageShape* used);

/** Whether `s`'s selective recomputation reruns nothing (its modules match no kernel of the model: the attention core
 *  where a fused kernel keeps no scores), so that its step is the one without recomputation. `priced`: one_stage of
 *  `s`'s training parameters, which the caller has already. */
bool recomputes_nothing(const Scenario& s, const StageSet& priced, const KernelCostModel& cost,
                        const PlatformSpec& platform);

} // namespace cs
