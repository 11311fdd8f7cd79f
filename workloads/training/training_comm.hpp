// The communication of a training iteration around its pipeline passes: ZeRO-3 parameter gathers before passes,
// data-parallel gradient buckets through the sync policy, the optimizer step, and ZeRO-1/2's gathers after it.
#pragma once

#include "workloads/training/pipeline_graph.hpp"
#include "workloads/training/training_builder.hpp"

#include <vector>

namespace cs {

class CommEmitter {
public:
  CommEmitter(TrainingGraph& out, const TrainingPlan& plan, StreamPool& streams,
              const std::vector<std::vector<PipelineOp>>& order);

  /** Whether op `op` of device `device` runs piece by piece: every pass under ZeRO-3 (each piece gathers its
   *  parameters), and the last gradient-completing pass of each stage when buckets close during backward. */
  bool in_pieces(int device, std::size_t op) const;

  /** Emits what follows the iteration's passes (`replicas`: each simulated replica's pipeline tasks); `ends` is
   *  what each simulated device's iteration started after. Returns what its next iteration starts after. */
  std::vector<int> iteration(int it, const std::vector<PipelineTasks>& replicas, const std::vector<int>& ends);

private:
  struct Bucket {
    int stage = 0;      // virtual stage
    std::size_t op = 0; // the op (of device stage % pp) whose piece or end makes it ready
    int piece = -1;     // that op's piece; -1 = the op's last task
    double bytes = 0;   // per member
  };
  struct Slot { // ZeRO-3: one piece that gathers its parameters first
    std::size_t op = 0;
    int piece = 0;
    double bytes = 0;        // dense parameters, gathered over the data-parallel group
    double expert_bytes = 0; // routed experts', gathered over the expert-data-parallel group
  };

  std::vector<Bucket> plan_buckets(const PipelineTasks& replica0) const;
  std::vector<Slot> plan_slots(int device, const PipelineTasks& replica0) const;
  double gathered_bytes_per_parameter(int vs) const;
  /** The dense group of `device`'s stage: every replica's CP ranks (`replicas` empty), or from replica `first` on,
   *  `count` replicas' (0: to the last); or the replicas `replicas`, CP rank 0 each. */
  SyncRequest group_request(int device, double bytes, const std::vector<int>& ready, TaskLabels labels,
                            const std::vector<int>& replicas = {}, int first = 0, int count = 0);
  /** HSDP (dp_replicate > 1): ZeRO's group is one shard group of dp / dp_replicate replicas. */
  bool replicated() const { return sharded_ && plan_.parallel.dp_replicate > 1; }
  /** HSDP: a bucket reduce-scattered inside each shard group, then each member's shard all-reduced across the groups
   *  with the members at its place (replicated_shards.cpp). Per replica, what its optimizer step waits for. */
  void reduce_replicated(int device, double bytes, const std::vector<int>& ready, TaskLabels labels,
                         std::vector<std::vector<int>>& done);
  /** ZeRO's all-gather of `bytes` over the dense group, one per shard group under HSDP: per member (replica x cp +
   *  CP rank), the task its consumers wait for. */
  std::vector<int> gather_dense(int device, double bytes, const std::vector<int>& ready, TaskLabels labels);
  /** The expert-data-parallel group of the replicas `group` (one per EP group, expert_dp_replicas): CP rank 0's, each
   *  other CP rank's group (an EP rank of its own) beside it as a copy; without expert parallelism (ep = 1) the
   *  dense group, every replica's CP ranks. */
  SyncRequest expert_request(int device, double bytes, const std::vector<int>& ready, TaskLabels labels,
                             const std::vector<int>& group);
  /** Where replica group[i]'s member sits in expert_request's members: i x this. */
  std::size_t expert_stride() const { return plan_.parallel.ep == 1 ? cp_ : 1; }
  void reduce_expert_gradients(int it, std::vector<std::vector<int>>& done, const std::vector<PipelineTasks>& replicas);
  /** ZeRO-3: slot `s` of device `d` gathers its parameters (prefetched: after the piece two slots before). */
  void gather_slot(int it, int d, const std::vector<Slot>& slots, std::size_t s,
                   const std::vector<PipelineTasks>& replicas, const std::vector<int>& ends);
  void reduce_bucket(int it, std::size_t b, const Bucket& k, const std::vector<PipelineTasks>& replicas,
                     std::vector<std::vector<int>>& done);
  /** The step's gradient reductions (and ZeRO-3's gathers, in trigger order); per simulated device, what the
   *  optimizer step waits for. */
  std::vector<std::vector<int>> communicate(int it, const std::vector<Bucket>& buckets,
                                            const std::vector<PipelineTasks>& replicas, const std::vector<int>& ends);
  int task_of(const PipelineTasks& p, int device, std::size_t op, int piece) const;
  /** DualPipe: the device holding the other copy's stage at `stage`'s place (its twin), or -1 with one copy. */
  int twin_device(int stage) const;
  /** The twin's op that reduces with `stage`'s op `op` (the same microbatch count into the step). */
  std::size_t twin_op(int stage, std::size_t op) const;
  /** Adds the twin's members to `req`; returns where they start among its members. */
  static std::size_t join(SyncRequest& req, const SyncRequest& twin);

  TrainingGraph& out_;
  const TrainingPlan& plan_;
  StreamPool& streams_;
  const std::vector<std::vector<PipelineOp>>& order_;
  std::vector<std::vector<char>> pieces_;            // per device, per op
  std::vector<std::vector<std::size_t>> reduce_ops_; // per virtual stage: the ops after which gradients are reduced
  int built_ = 1;
  bool sharded_ = false, zero3_ = false;
  bool keeps_unsharded_ = false; // ZeRO-3 under a pipeline that gathers once a step and reduces once (torchtitan)
  int cp_ = 1;                   // context-parallel ranks in each replica's share of the dense gradient group
  int group_ = 1;                // the dense gradient group: dp x cp x copies of the model
  GatherElementBytes gather_;    // parameters on the wire (gathers)
  double reduce_bytes_ = 2;      // gradients on the wire
};

} // namespace cs
