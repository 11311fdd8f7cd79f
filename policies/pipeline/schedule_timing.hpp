// A pipeline schedule run on compute alone: each device runs its ops in order, each op once the pass it needs from
// the neighbouring virtual stage has ended. The planner's bound and the report's pipeline bubble both ask it.
#pragma once

#include "policies/pipeline/pipeline_schedule.hpp"
#include "policies/pipeline/stage_map.hpp"

#include <functional>
#include <vector>

namespace cs {

/** The ends of `iterations` back-to-back iterations of `order` (per device, its ops) on the chains of virtual stages
 *  placed by `map`: an op lasts `seconds(virtual stage, pass)`, a forward waits for the previous stage's forward of
 *  its microbatch, a gradient pass for the next stage's (in the same chain), and device d adds `tail[d]` (its optimizer
 * step; empty = none) after each iteration before starting the next. No communication. Throws std::logic_error when the
 * order cannot run (a device waits for a pass that never comes). */
std::vector<double> schedule_iteration_ends(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map,
                                            const std::function<double(int, Pass)>& seconds,
                                            const std::vector<double>& tail, int iterations);
/** The same with an op's length read off the op itself (an op that runs paired with a neighbour can be slower). */
std::vector<double> schedule_iteration_ends(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map,
                                            const std::function<double(int, const PipelineOp&)>& seconds,
                                            const std::vector<double>& tail, int iterations);
/** The same with each op's length given: seconds[device][op], as `order` lists them (an op paired with a neighbour
 *  can depend on which one). */
std::vector<double> schedule_iteration_ends(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map,
                                            const std::vector<std::vector<double>>& seconds,
                                            const std::vector<double>& tail, int iterations);

} // namespace cs
