// Compute slowed by communication running beside it: the SMs and memory bandwidth its kernels take.
#pragma once

#include "models/collectives/collective_model.hpp"
#include "models/transformer/pass_cost.hpp"
#include "workloads/training/stage_costs.hpp"

#include <optional>
#include <vector>

namespace cs {

/** ZeRO's groups, as the run forms them for replica 0's stage 0: its shard group, and under HSDP the group of one
 *  place across the shard groups, whose all-reduce moves a member's 1/`members` of each bucket. */
struct ZeroGroups {
  GroupShape shard;
  std::optional<GroupShape> across;
  int members = 1; // ranks of a shard group: dp / dp_replicate x cp
  /** The reduction of `bytes` of gradients a member holds: a reduce-scatter (ZeRO) or an all-reduce over the shard
   *  group, and under HSDP the all-reduce of the shard across the groups. */
  double reduce_seconds(double bytes, bool sharded) const;
};

/** The ZeRO groups of `parallel` on `platform`. */
ZeroGroups zero_groups(const ParallelLayout& parallel, const PlatformSpec& platform);

/** With a share f of the GPU taken for c of the t seconds a piece computes, it takes min(t / (1 - f), t + c f). */
double beside_communication(double t, double c, double f);

/** ZeRO-3: every pass gathers its parameters and every backward reduce-scatters its gradients beside it, slowing
 *  the layer's kernels while they run (under HSDP the reduce-scatter's shard is all-reduced across the groups too). */
void slow_beside_zero3(PieceTimes& layer, const ModelParams& model, int tp, const FrameworkProfile& fw,
                       const ZeroGroups& g);

/** Data parallelism without ZeRO-3, reducing buckets during backward: the reduction of a segment's gradients (an
 *  all-reduce, or ZeRO-1/2's reduce-scatter) runs beside the backward of the segment that runs next (the one before
 *  it in forward order) and slows it (its Segment::beside_reduce_s). */
void slow_beside_reduction(std::vector<StageCost>& stages, const TrainingParams& params, int zero, const ZeroGroups& g);

} // namespace cs
