// How long two passes run as one op (DualPipe's overlapped chunks, Megatron-Core's combined 1F1B) at the least: their
// compute blocks interleaved as the task graph interleaves them, each block waiting for its own pass's all-to-all.
#pragma once

#include "workloads/training/stage_costs.hpp"

namespace cs {

/** What a forward's MoE layers and a whole backward's take besides their own compute when paired: per pass, its
 *  segments' tasks as the MoE emitter lays them out (a layer's dense part; the dispatch's wait; its experts, `experts`
 *  seconds forward or backward, slowed beside the other pass's all-to-all; the combine's wait; a join), cut into
 *  blocks before each wait, the shorter list cut at its longest blocks' middles until the two alternate (the
 *  backward's first), and run in that order, a block that follows a wait no sooner than `alltoall_s` after its own
 *  pass's block before it. Returns the pair's idle: that schedule's end less the two passes' compute. Valid where each
 *  dispatch and combine is one all-to-all of at least `alltoall_s` (static placement, no pipelined chunks) and the
 *  passes wait for nothing else between their first and last tasks. */
double paired_idle_seconds(const StageCost& forward, const StageCost& backward, double experts_forward_s,
                           double experts_backward_s, double alltoall_s);

} // namespace cs
