// Compute slowed by communication running beside it: the SMs and memory bandwidth its kernels take.
#pragma once

#include "models/collectives/collective_model.hpp"
#include "models/transformer/pass_cost.hpp"
#include "workloads/training/stage_costs.hpp"

#include <vector>

namespace cs {

/** With a share f of the GPU taken for c of the t seconds a piece computes, it takes min(t / (1 - f), t + c f). */
double beside_communication(double t, double c, double f);

/** ZeRO-3: every pass gathers its parameters and every backward reduce-scatters its gradients beside it, slowing
 *  the layer's kernels while they run. `g` is ZeRO's shard group; under HSDP the all-reduce of each shard across the
 *  groups is not counted here [recon]. */
void slow_beside_zero3(PieceTimes& layer, const ModelParams& model, int tp, const FrameworkProfile& fw,
                       const GroupShape& g);

/** Data parallelism without ZeRO-3, reducing buckets during backward: the reduction of a segment's gradients (an
 *  all-reduce, or ZeRO-1/2's reduce-scatter) runs beside the backward of the segment that runs next (the one before
 *  it in forward order) and slows it (its Segment::beside_reduce_s). */
void slow_beside_reduction(std::vector<StageCost>& stages, const TrainingParams& params, int zero, const GroupShape& g);

} // namespace cs
