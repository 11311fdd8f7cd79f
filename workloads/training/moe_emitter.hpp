// The MoE layers of a training graph: per layer, microbatch and pass, each expert-parallel rank's dense part, its
// dispatch and combine all-to-alls (COLLECTIVE tasks over the EP group, sized by the routing) and its experts'
// compute, pipelined in chunks when the policy says so. Routing and placement come from registered policies.
#pragma once

#include "models/collectives/collective.hpp"
#include "models/moe/moe_layer_cost.hpp"
#include "models/moe/moe_policy.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "workloads/training/routing_ahead.hpp"
#include "workloads/training/size_matrix_pool.hpp"
#include "workloads/training/stage_costs.hpp"
#include "workloads/training/training_builder.hpp"
#include "workloads/training/training_extension.hpp"

#include <boost/container_hash/hash.hpp>
#include <deque>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace cs {

class MoeEmitter : public TrainingExtension {
public:
  MoeEmitter(const TrainingPlan& plan, TaskGraph& graph);

  /** The MoE layers' segments (Segment::moe). */
  bool claims(const Segment& segment) const override { return segment.moe; }
  /** Emits an MoE layer's segment: returns its first and last tasks and adds its compute time to `busy`. */
  std::pair<int, int> emit(const SegmentSite& site, const Segment& s, TaskLabels labels, double& busy) override;
  /** The MoE statistics of every step built. */
  void finish(TrainingGraph& out) const override;

  const MoeStats& stats() const { return stats_; }

private:
  struct Step {
    MoeStep plan;
    std::vector<std::vector<PieceTimes>> chunks; // [rank][chunk]: expert compute of one chunk
    std::vector<double> shadow_s;                // per rank (all equal): closed-form shadow weight broadcast
    SizeMatrix traffic; // the dispatch's bytes between ranks, as the dispatcher sends them (the dispatch side's matrix)
    mutable double overlap_comm_s = -1; // one all-to-all's closed form, once an overlapped op asks (-1: not yet)
    double imbalance = 1;               // the busiest rank's load over the mean
  };
  /** Rank 0's expert work (each chunk's passes, the policy's extra compute) made the slowest of its group's: what
   *  replica 0 runs when it stands for its group (TrainingPlan::slowest_rank). */
  void take_slowest_rank(Step& st, int device) const;
  /** Adds one step of `layer` to the statistics. */
  void account(const Step& st, int layer);
  /** The routing group that group `group` runs: group 0 and plan.routing_group trade places (an EP group fold). */
  int routed_as(int group) const;
  /** The routing request of step (iteration, layer, microbatch, group). */
  RoutingRequest request(int iteration, int layer, int microbatch, int group) const;
  /** Where a step's all-to-alls for one op go. */
  struct AllToAllSite {
    const Step& step;
    const PipelineOp& op;
    int stage;
    const Segment& segment;
    int group, device;
  };
  /** All-to-alls a backward op sends before its own: 1 the dispatch again (MPipeMoE's buffer not kept), 2 the dispatch
   *  and the combine again (the `moe` recompute module), 0 for none. */
  int sends_again(const Step& st, const PipelineOp& op) const;
  /** One of a step's all-to-alls, made once per key: variant 0 chunk `chunk`'s dispatch, 1 its combine, 2 the dispatch
   *  again, 3 the combine again; the share of the step's traffic and the side follow from the variant. */
  std::vector<int> alltoall(const AllToAllSite& at, int variant, int chunk, TaskLabels labels);
  /** The all-to-alls of an EP group that is not built, for one op: no member is simulated; the lowering counts what
   *  they move. */
  void count_group(int group, int device, const PipelineOp& op, int stage, const Segment& s, TaskLabels lab);
  /** `t` seconds of compute in `op`: slowed by the dispatcher's SM share beside the paired op's all-to-all when the
   *  op runs overlapped, or beside its own when `alongside` (the all-to-all taken as long as this layer's own
   *  dispatch). [recon] */
  double beside(const Step& st, double t, int group, int device, const PipelineOp& op, bool alongside = false) const;
  const Step& step(int iteration, int layer, int microbatch, int group, int device);
  /** The all-to-all-v under `key`, made on first use: `dispatch` scaled by `factor`, transposed on the combine side. */
  std::vector<int> collective(const std::tuple<int, int, int, int, int, int, int, int>& key, int group, int device,
                              const SizeMatrix& dispatch, double factor, bool combine_side, TaskLabels labels);
  const std::vector<int>& group_hosts(int group, int device) const; // made once per (group, device)
  MoeContext context(int group, int device) const;
  /** The all-to-alls and experts after `pre`; `shared_s` of shared-expert compute runs between them, beside the
   *  first all-to-all (framework.moe_shared_expert_overlap). Returns the join of the last all-to-all. */
  int forward_chain(const Step& st, int rank, int group, int device, int stream, int pre, const PipelineOp& op,
                    int stage, const Segment& s, TaskLabels lab, double& busy, double shared_s);

  const TrainingPlan& plan_;
  TaskGraph& graph_;
  StreamPool dispatch_streams_, combine_streams_;
  ExpertCost expert_;
  static constexpr int kDrawAhead = 4; // microbatches of a layer whose routings are drawn together
  RoutingAhead ahead_;
  int microbatches_ = 1;  // per replica per iteration
  int asking_groups_ = 1; // the EP groups whose steps are asked for (built or counted)
  int ep_ = 1, groups_ = 1;
  int replicas_ = 1, fold_ = 1; // replicas per EP group; EP ranks per replica (tp under MoE parallel folding, else 1)
  int built_ = 1;               // replicas simulated (replica 0 alone when it stands for all)
  double copies_ = 1;           // EP groups each simulated group stands for
  bool counts_groups_ = false;  // the groups not built: their all-to-alls counted one by one (count_group)
  std::map<std::tuple<int, int, int, int>, const Step*> steps_; // (iteration, layer, microbatch, group)
  std::deque<Step> step_store_;                                 // what steps_ points to (a deque never moves them)
  // Where the routing is the same for every step and the policy keeps no state, each group's one planned step (a
  // 2,048-GPU step planned 1,830 alike, a tenth of its wall time).
  std::map<int, const Step*> reused_;
  mutable std::map<std::pair<int, int>, std::vector<int>> hosts_; // EP group hosts by (group, device); never iterated
  // By (microbatch, stage, layer, iteration, pass, variant, chunk, group): looked up, never iterated (a step makes
  // hundreds of thousands; a tree's pointer chase per lookup was a fifth of their emission).
  std::unordered_map<std::tuple<int, int, int, int, int, int, int, int>, std::vector<int>,
                     boost::hash<std::tuple<int, int, int, int, int, int, int, int>>>
      collectives_;
  SizeMatrixPool sizes_; // every all-to-all's sizes, shared by value
  // Scaled matrices by (the step's traffic, scale, combine side, group, device), with their bytes per rank (summed
  // once: a 256-rank matrix is 65,536 sizes, and a step asks for it in every layer and microbatch): looked up, never
  // iterated (the traffic's address is stable: steps are kept in step_store_).
  struct ScaledMatrix {
    SizeMatrix sizes;
    double bytes_per_rank = 0;
    bool transposed = false; // `sizes` is the step's dispatch, read transposed (the combine side)
  };
  std::map<std::tuple<const double*, double, bool, int, int>, ScaledMatrix> scaled_;
  MoeStats stats_;
};

} // namespace cs
