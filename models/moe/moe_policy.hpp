// What an MoE policy decides for one layer step of one expert-parallel group: where each expert (and replica) runs,
// where each sample runs, which tokens are dropped, what the all-to-alls carry, and how the layer is pipelined.
// Policies (static-ep, fastermoe, flexmoe, netmoe, lsh-moe, mpipemoe) register in the `moe` domain.
#pragma once

#include "base/registry.hpp"
#include "models/moe/moe_routing.hpp"

#include <functional>
#include <vector>

namespace cs {

/** The group and the prices a policy weighs its choices with (from the cost stack and the network). */
struct MoeContext {
  int ranks = 1;   // expert-parallel ranks
  int experts = 1; // routed experts
  int top_k = 1;
  int samples_per_rank = 1;
  double tokens_per_sample = 1;
  double capacity_factor = 0;     // 0 = dropless
  double token_bytes = 0;         // one token's hidden vector on the wire
  double expert_state_bytes = 0;  // one expert's weights, gradients and optimizer state (what migrating moves)
  double expert_weight_bytes = 0; // one expert's weights (what a shadow copy receives)
  std::vector<int> machine;       // per rank: its machine
  double hidden = 0;              // model width
  double expert_parameters = 0;   // one expert's weights
  int iteration = 0, layer = 0, microbatch = 0, group = 0;
  /** Forward seconds of one expert over `tokens` tokens on one GPU (backward is about twice that). */
  std::function<double(double tokens)> expert_seconds;
  /** Seconds of an all-to-all of these per-pair bytes (ranks x ranks, row i sends to column j) by its closed form. */
  std::function<double(const std::vector<double>& bytes)> alltoall_seconds;
  /** Seconds to send `bytes` from one GPU to every other rank of the group, or to reduce them back (closed form). */
  std::function<double(double bytes)> broadcast_seconds;
  /** Seconds to move `bytes` from one GPU of the group to another on another machine (or the node's, if one). */
  std::function<double(double bytes)> move_seconds;
};

/** One layer step's plan for one group. Forward: dispatch all-to-all, experts, combine all-to-all; backward mirrors
 *  it. Each side may be cut into `partitions` pipelined chunks. */
struct MoeStep {
  std::vector<std::vector<double>> tokens; // [rank][expert]: tokens the rank's replica of the expert computes
  std::vector<double> dispatch;         // ranks x ranks bytes, row i sends to column j (the combine is its transpose)
  double routed = 0;                    // token-expert assignments routed
  double dropped = 0;                   // of those, dropped for capacity
  std::vector<double> extra_forward_s;  // per rank: compute the policy adds before dispatch (hashing), forward
  std::vector<double> extra_backward_s; // and in backward
  double wire_scale = 1;                // all-to-all bytes actually sent per byte of tokens (compression)
  double compute_scale = 1;             // expert tokens actually computed per routed token (centroids)
  int partitions = 1;                   // pipelined chunks (MPipeMoE, FasterMoE's smart schedule)
  double shadow_bytes = 0;              // weights broadcast from owners before the layer (and gradients reduced back)
  double moved_bytes = 0;               // expert state moved to change the placement, before this step
  struct Move {
    int from = 0, to = 0; // ranks
    double bytes = 0;
  };
  std::vector<Move> moves;        // those moves: they run beside training, on their own streams
  int placement_changes = 0;      // replicas added, removed or moved before this step
  double activation_scale = 1;    // the layer's routed-token buffers held for backward, relative to unpipelined
  double recommunicate_share = 0; // share of the dispatch resent in backward to save its buffer (MPipeMoE)
};

class MoePolicy : public Configurable {
public:
  /** Plans one step. Policies may keep state across steps (FlexMoE's placement); steps of a layer and group come in
   *  iteration order. */
  virtual MoeStep plan(const MoeContext& context, const Routing& routing) = 0;
  /** Whether plan reads each sample's row (to place samples or gate them); if not, only each rank's totals count
   *  and routing models may draw them per rank (RoutingRequest::rank_totals). */
  virtual bool reads_samples() const { return false; }
  /** Experts per block when plan reads only what each rank sends each block of consecutive experts and each expert's
   *  total (RoutingRequest::rank_blocks), for a model of `experts` over `ranks` with `capacity_factor` (0: dropless);
   *  0 when it reads more. */
  virtual int block_sums_only(int /*experts*/, int /*ranks*/, double /*capacity_factor*/) const { return 0; }
  /** Whether it treats every rank and every group alike (fixed placement, no per-rank decisions): under a routing
   *  that is the same for every group and rank, one rank stands for all. */
  virtual bool ranks_alike() const { return false; }
  /** Expert slots each GPU holds per MoE layer beyond experts / ranks (room for replicas): each holds an expert's
   *  weights, gradients and optimizer state whether a replica fills it or not. */
  virtual int extra_expert_slots() const { return 0; }
};

/** Expert-parallel placement: which ranks hold a replica of each expert. */
using ExpertPlacement = std::vector<std::vector<int>>;

/** DeepSpeed/Megatron's: experts / ranks consecutive experts per rank. */
ExpertPlacement contiguous_placement(int experts, int ranks);

/** Routes `routing` (sample s runs on rank sample_rank[s]; empty = its own rank) through `placement`: a sample's
 *  tokens for an expert go to the replica on its own rank when there is one, else split evenly over the replicas.
 *  With a capacity factor, each rank sends each expert at most capacity_factor x its even share and the rest is
 *  dropped (Megatron-Core's drop per expert; `pad` sends and computes full capacity buffers, as GShard and
 *  DeepSpeed do). Fills tokens, dispatch, routed and dropped. */
MoeStep route_through(const MoeContext& c, const Routing& routing, const ExpertPlacement& placement,
                      const std::vector<int>& sample_rank = {}, bool pad = false);

/** Forward seconds of one GPU's experts on `tokens` (per expert; one GEMM pass each, none for an idle expert). */
double expert_seconds_of(const MoeContext& c, const std::vector<double>& tokens, double scale = 1);

/** Per rank, its expert tokens (the load the slowest rank sets). */
std::vector<double> rank_loads(const MoeStep& step);

/** Registered MoE policies read `capacity_pad` the same way; the helper declares it. */
void read_capacity_pad(ObjectReader& r, bool& pad);

} // namespace cs
