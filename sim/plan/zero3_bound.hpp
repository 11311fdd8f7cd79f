// The planner's bound on what ZeRO-3's parameter gathers take on each device's communication stream in one iteration.
#pragma once

#include "platform/platform_spec.hpp"
#include "sim/plan/pipeline_bound.hpp"
#include "sim/plan/planner.hpp"
#include "workloads/training/stage_costs.hpp"
#include "workloads/training/training_params.hpp"

#include <vector>

namespace cs {

/** Per pipeline device, no more than the seconds its communication stream spends on ZeRO-3's parameter all-gathers
 *  in one iteration (empty unless ZeRO-3 shards over more than one data-parallel rank). The run gathers, on that one
 *  stream and after the device's previous iteration ends, every piece of every op it runs (a forward all of its
 *  chunk's dense parameters, a backward all but what stays gathered; routed experts are left out here); each gather is
 *  a closed-form all-gather over the device's dp x cp group, and no algorithm or protocol moves a byte faster than
 *  the least per-byte time of any of them (their times are affine in the bytes, latency first). So the measured
 *  iteration is no shorter than the smallest of these: the device whose iteration ends last runs all of its own
 *  after its previous end. `counts`: pass_counts of the plan's schedule; `set`: its bound_stages. */
std::vector<double> zero3_gather_seconds(const TrainingParams& params, const Plan& plan, const StageSet& set,
                                         const PlatformSpec& platform, const PassCounts& counts);

/** Per pipeline device, no more than the seconds ZeRO-1 and ZeRO-2 take to all-gather its updated shards after its
 *  optimizer step, before its next iteration starts (empty unless they shard over more than one rank): every dense
 *  parameter of its chunks, at the least per-byte time of any all-gather over its data-parallel group (dp x cp, and
 *  the twin device's under DualPipe, whose two copies share the group). */
std::vector<double> zero12_gather_seconds(const TrainingParams& params, const Plan& plan, const StageSet& set,
                                          const PlatformSpec& platform);

} // namespace cs
