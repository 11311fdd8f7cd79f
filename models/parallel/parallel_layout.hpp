// How a training job's ranks are split and placed: the one value that holds the parallel degrees and answers every
// question derived from them (rank counts, hosts, groups). Megatron-Core's vocabulary: TP, CP, PP, VP, EP, ETP, DP.
#pragma once

#include <string>
#include <vector>

namespace cs {

/** Rank order on GPUs, innermost first. Tensor- and then context-parallel ranks are always innermost (they exchange
 *  the most and stay inside a node); the placement decides what comes next. */
enum class Placement {
  TP_PP_DP, // a replica's pipeline stages next (pipelines share a node, data parallelism spans nodes)
  TP_DP_PP, // a stage's replicas next (Megatron's default tp-cp-ep-dp-pp order: the pipeline spans nodes)
};

/** The scenario spelling of a placement ("tp-pp-dp", "tp-dp-pp"). */
const char* placement_name(Placement placement);
/** The placement a scenario names; throws std::invalid_argument for another spelling. */
Placement placement_from_name(const std::string& name);
/** The other rank order of the two. */
Placement other_placement(Placement placement);

/** Where one GPU sits in the layout. */
/** How the ranks of a context-parallel group exchange keys and values (Megatron-Core's cp_comm_type): p2p, a ring
 *  of point-to-point sends overlapped with the attention blocks (ring attention with causal load balancing); a2a,
 *  all-to-alls that trade the sequence split for a head split (DeepSpeed-Ulysses); allgather, the keys and values
 *  gathered whole before attention and their gradients reduce-scattered after. */
enum class CpComm { P2P, A2A, ALLGATHER };

/** The scenario spelling of a CP exchange ("p2p", "a2a", "allgather"). */
const char* cp_comm_name(CpComm comm);

struct RankCoords {
  int replica = 0; // data-parallel index
  int stage = 0;   // pipeline device
  int cp_rank = 0; // context-parallel index inside the replica's stage
  int tp_rank = 0; // tensor-parallel index inside the context-parallel rank
};

/** The parallel layout of a training job, after the data-parallel degree is resolved. Invariants (checked by
 *  `problem()`): every degree >= 1 (etp: 0 means "as tp"), etp divides tp, and the expert grid (etp x ep x edp)
 *  folds the same tp x cp x dp ranks of each stage as the attention's grid (Megatron-Core's MoE parallel folding).
 *
 *  Ranks of one pipeline stage are numbered tp innermost, then cp, then dp: i = (replica x cp + cp_rank) x tp +
 *  tp_rank. The experts fold the same numbers etp innermost, then ep, then edp: expert-parallel rank k of group g is
 *  i = (g x ep + k) x etp. */
struct ParallelLayout {
  int tp = 1;   // tensor parallelism (tensor_model_parallel_size)
  int cp = 1;   // context parallelism: the sequence split over cp ranks (context_parallel_size)
  int pp = 1;   // pipeline devices (pipeline_model_parallel_size)
  int vpp = 1;  // model chunks per pipeline device as the scenario asks (virtual_pipeline_model_parallel_size)
  int ep = 1;   // expert parallelism (expert_model_parallel_size)
  int etp = 0;  // expert tensor parallelism (expert_tensor_parallel_size; 0 = tp)
  int dp = 1;   // data-parallel replicas
  int zero = 0; // ZeRO stage: 1 shards optimizer state over dp, 2 also gradients, 3 also weights
  // Replicas of the sharded state (HSDP; torchtitan's data_parallel_replicate_degree, Megatron-Core's
  // num_distributed_optimizer_instances): ZeRO shards over groups of dp / dp_replicate consecutive replicas, and the
  // groups' shards are all-reduced across them. 1: one group of every replica.
  int dp_replicate = 1;
  bool sequence_parallel = false; // Megatron's sequence parallelism inside the TP group
  CpComm cp_comm = CpComm::P2P;   // how the CP ranks exchange keys and values
  Placement placement = Placement::TP_PP_DP;

  /** GPUs the job uses: tp x cp x pp x dp. */
  long long ranks() const { return static_cast<long long>(tp) * cp * pp * dp; }
  /** GPUs of one pipeline stage: tp x cp x dp. */
  long long stage_ranks() const { return static_cast<long long>(tp) * cp * dp; }
  /** GPUs of one model replica's stage, which hold one copy of its dense weights: tp x cp. */
  int model_ranks() const { return tp * cp; }
  /** Replicas one ZeRO shard group spans: dp / dp_replicate. */
  int shard_dp() const { return dp / dp_replicate; }
  /** Sequence parallelism in effect (it needs tp > 1). */
  bool sp() const { return sequence_parallel && tp > 1; }

  /** The expert tensor-parallel degree in effect: etp, or tp when not given. */
  int expert_tp() const { return etp > 0 ? etp : tp; }
  /** Expert-parallel ranks per TP group: tp / etp (1 unless MoE parallel folding), each routing its etp / tp of the
   *  group's tokens. */
  int ep_fold() const { return tp / expert_tp(); }
  /** Expert-parallel ranks per replica's stage: cp x tp / etp. The expert grid folds the CP ranks too (each routes
   *  its own 1/cp of the sequence), as Megatron-Core builds its expert groups over tp x cp x dp. 1 without expert
   *  parallelism (ep = 1: every GPU holds every expert). */
  int ep_ranks_per_replica() const { return ep > 1 ? cp * ep_fold() : ep_fold(); }
  /** Data-parallel replicas one expert-parallel group spans: ep / (cp x tp / etp). */
  int ep_replicas() const { return ep / ep_ranks_per_replica(); }
  /** Expert data parallelism: copies of each expert, tp x cp x dp / (etp x ep). */
  int expert_dp() const;

  /** The GPU at `coords`. */
  int host(const RankCoords& coords) const;
  /** The GPU of TP rank 0, CP rank 0 of `replica`'s pipeline device `stage` (the rank the builder simulates). */
  int host(int replica, int stage) const { return host(RankCoords{replica, stage, 0, 0}); }
  /** Where GPU `gpu` (0 <= gpu < ranks()) sits. */
  RankCoords coords_of(int gpu) const;
  /** The GPU of rank `i` of pipeline device `stage` (numbered tp, then cp, then dp). */
  int stage_rank_host(int stage, long long i) const;

  /** The groups, as GPU lists in rank order. */
  std::vector<int> tp_group(int replica, int stage, int cp_rank = 0) const;
  std::vector<int> cp_group(int replica, int stage, int tp_rank = 0) const;
  std::vector<int> pp_group(int replica, int cp_rank = 0, int tp_rank = 0) const;
  std::vector<int> dp_group(int stage, int cp_rank = 0, int tp_rank = 0) const;
  /** ZeRO's shard group of replica 0 at `stage` (CP and TP rank 0): the dp group, or under HSDP its first
   *  dp / dp_replicate replicas. */
  std::vector<int> shard_group(int stage) const;
  /** Expert-parallel group `group` (0 <= group < expert_dp()) of pipeline device `stage`: rank k is the first GPU of
   *  its etp expert-TP ranks. */
  std::vector<int> ep_group(int group, int stage) const;
  /** Machines of `gpus_per_machine` GPUs that EP group 0 of pipeline device 0 spans (node-limited routing's choice). */
  int ep_group_machines(int gpus_per_machine) const;
  /** The data-parallel replicas that hold the same experts as replica `replica` (one per EP group). */
  std::vector<int> expert_dp_replicas(int replica) const;

  /** Why the layout breaks an invariant, or "" when it holds. */
  std::string problem() const;
};

} // namespace cs
