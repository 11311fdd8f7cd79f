// The planner's branch-and-bound bound: a plan's pipeline compute alone, as a two-iteration timeline.
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/pass_cost.hpp"
#include "platform/platform_spec.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "sim/plan/planner.hpp"
#include "workloads/training/stage_costs.hpp"
#include "workloads/training/training_params.hpp"

#include <array>
#include <map>
#include <optional>
#include <vector>

namespace cs {

/** The bound on a plan's iteration: its pipeline's compute alone. Each device runs the schedule's ops in order, each
 *  op once the pass it needs from the neighbouring virtual stage has ended, every op lasting its stage's kernels and
 *  blocking TP collectives (an MoE layer adds `experts`, the planner's price of its routed experts on one rank, and
 *  its all-to-alls where nothing hides them: exposed_alltoall_seconds; an op paired with a neighbour, its experts
 *  slowed by the dispatcher's SM share beside the other's all-to-all, and with `whole_alltoalls` the pair's idle
 *  beside each other's all-to-alls, paired_idle_seconds), then its optimizer step and ZeRO-1/2's gathers after it
 *  (zero12_gather_seconds); two iterations, the second measured, as the planner's runs are. `whole_alltoalls`: the
 *  MoE policy sends each dispatch and combine whole, at the routed bytes (static placement: no pipelined chunks, no
 *  compression). The simulation adds to these tasks and edges (pipeline sends, the reductions, all-to-alls slower
 *  than at an even load, skew); unlike the average device's compute this sees the pipeline's fill and drain. Not
 *  strict: delays in the first iteration can shorten the second, so the planner tests hold it below the simulated
 *  time of every plan of small models. */
double pipeline_compute_bound(const TrainingParams& params, const Plan& plan, const PieceTimes& experts,
                              const KernelCostModel& cost, const PlatformSpec& platform, int microbatches,
                              bool whole_alltoalls = false);
/** The same, given the plan's bound_stages and even_alltoall_seconds (a search prices each once per shape), and the
 *  schedule's order for these microbatches if the caller keeps it. */
double pipeline_compute_bound(const TrainingParams& params, const Plan& plan, const StageSet& set,
                              const PieceTimes& experts, const KernelCostModel& cost, const PlatformSpec& platform,
                              int microbatches, double even_alltoall_s, bool whole_alltoalls = false,
                              const std::vector<std::vector<PipelineOp>>* order = nullptr);

/** The stages both bounds price: transformer_stages on the plan's shape and its schedule's stage map (from `pieces`
 *  where given: price_stage_pieces for the plan's layout). */
StageSet bound_stages(const TrainingParams& params, const Plan& plan, const KernelCostModel& cost,
                      const PlatformSpec& platform, const StagePieces* pieces = nullptr);

/** Per device and virtual stage, how many ops of each pass (0 forward, 1 backward, 2 input, 3 weight gradient) one
 *  iteration of a schedule's order runs there, and [4] how many of its forward and backward ops run unpaired. */
using PassCounts = std::vector<std::vector<std::array<int, 5>>>;
PassCounts pass_counts(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map);

/** Per device, the paired ops (a forward and a whole backward run as one) it runs of each (forward's stage,
 *  backward's stage). */
using PairCounts = std::vector<std::map<std::pair<int, int>, int>>;
PairCounts pair_counts(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map);

/** Whether paired ops idle beside each other's all-to-alls as paired_idle_seconds lays them out: an MoE plan whose
 *  policy sends each all-to-all whole (`whole_alltoalls`), with nothing that adds waits or tasks to a pass
 *  (delay_wgrad_compute, the moe recompute module, context parallelism). */
bool pairs_wait(const TrainingParams& params, const Plan& plan, bool whole_alltoalls, double even_alltoall_s);

/** What each MoE layer of an op left unpaired under a schedule that pairs passes adds to the bounds: its dispatch and
 *  combine at an even load, unless the framework hides them or the passes carry them already (else 0). */
double unpaired_alltoall_seconds(const TrainingParams& params, const Plan& plan, double even_alltoall_s);

/** How `order` runs as a chain of virtual stages whose first pp are the devices' first chunks in device order (one
 *  chain: 1F1B, GPipe, ZB-H1, interleaved 1F1B, DualPipeV): each device starts with microbatch 0's forward on its
 *  first chunk, and its last gradient pass is that chunk's, of the same microbatch on every device (each waits for
 *  the next device's), followed only by weight passes, which wait for nothing. */
struct ChainShape {
  std::vector<std::vector<int>> trailing_weight_stages; // per device, the stages of its weight passes after that
};
/** The chain `order` runs as, or none (DualPipe's two chains, an order whose last ops are otherwise). */
std::optional<ChainShape> chain_shape(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map);

/** What pipeline_work_bound's chain bound needs: the order's chain_shape and the plan's zero12_gather_seconds (empty
 *  without ZeRO-1/2's gathers). */
struct ChainBound {
  ChainShape shape;
  std::vector<double> gathers;
};

/** A weaker bound than pipeline_compute_bound and far cheaper (no timeline): the least work, ops and optimizer step,
 *  any device does in one iteration. Never above pipeline_compute_bound for the same inputs, so a search can sort by
 *  it and work out the timeline only for the plans it reaches.
 *
 *  With `chain` (the plan's order runs as one), the bound is also no less than any device d's fill, work and tail:
 *  the first device starts the measured iteration at its own end of the first, e_0; d's first op waits for
 *  microbatch 0's forwards on the stages before it; d runs its ops one after another, then its tail (optimizer step
 *  and gathers). The first iteration ends no later than e_0 plus the most any device's trailing weight passes and
 *  tail exceed the first device's, since each device's last gradient pass waits for the next device's. Unlike the
 *  least work, this sees the most loaded device, as a memory-bound partition leaves it (one layer on the first
 *  stages, four on the last). */
double pipeline_work_bound(const TrainingParams& params, const Plan& plan, const StageSet& set,
                           const PieceTimes& experts, const KernelCostModel& cost, const PassCounts& counts,
                           double even_alltoall_s, const std::vector<double>& pair_idle = {},
                           const ChainBound* chain = nullptr);

/** One MoE layer's dispatch or combine all-to-all for one microbatch at an even load (every rank's routed tokens
 *  spread over the experts alike), by its dispatcher's traffic and the all-to-all-v closed form, where nothing hides
 *  it: a schedule that neither pairs passes nor overlaps the EP communication (Megatron-Core's combined 1F1B), and
 *  shared experts not computed beside it. 0 otherwise, and for a dense model. An even load is the fastest the
 *  all-to-all gets for the tokens routed, so the bound may add it twice to each pass. */
double exposed_alltoall_seconds(const TrainingParams& params, const Plan& plan, const PlatformSpec& platform);
/** Whether nothing hides the plan's all-to-alls (exposed_alltoall_seconds is then even_alltoall_seconds, else 0). */
bool alltoall_exposed(const TrainingParams& params, const Plan& plan);

/** The same all-to-all whether or not anything hides it (0 for a dense model or ep 1). */
double even_alltoall_seconds(const TrainingParams& params, const Plan& plan, const PlatformSpec& platform);

} // namespace cs
