// How tokens choose experts: routing models (uniform, Zipf-skewed with drift, sample locality, forced balance, a
// recorded trace) registered by name in the `moe_routing` policy domain.
#pragma once

#include "base/registry.hpp"

#include <cstdint>
#include <random>
#include <vector>

namespace cs {

/** One MoE layer's step for one expert-parallel group: which samples there are and what they choose from. */
struct RoutingRequest {
  int iteration = 0, layer = 0, microbatch = 0, group = 0;
  int ranks = 1;                // expert-parallel ranks in the group
  int samples_per_rank = 1;     // samples in each rank's microbatch
  double tokens_per_sample = 1; // sequence length
  int experts = 1, top_k = 1;
  std::uint64_t seed = 0; // the scenario's seed
  /** The policy reads only each rank's totals: a model whose samples draw independently from one distribution may
   *  put a rank's whole routing in its first sample's row (the sum of the samples' multinomials is the multinomial
   *  of their sum, at a samples_per_rank-th of the draws) and leave the others zero. */
  bool rank_totals = false;
  /** With rank_totals, the policy reads only what each rank sends each block of `rank_blocks` consecutive experts and
   *  what each expert gets in all (static placement, no capacity): a model may draw those sums alone, each rank's
   *  blocks then each block's total over its experts, and fill the rank's row with any split that keeps both (the
   *  same joint law of the two at a fraction of the draws; 0: not asked). */
  int rank_blocks = 0;
};

/** Per sample (rank r's samples are r * samples_per_rank, ...), the token-expert assignments each expert gets: a
 *  sample's row sums to tokens_per_sample x top_k. */
struct Routing {
  std::vector<std::vector<double>> tokens;
};

class RoutingModel : public Configurable {
public:
  /** The routing of one step; the same request always gives the same routing. It may be called from two threads
   *  at once (the MoE emitter draws the next steps' routings beside the current one): keep no state between calls. */
  virtual Routing route(const RoutingRequest& request) const = 0;
  /** Whether every EP group gets the same routing whatever its group, seed or draw (then one group stands for all on
   *  a fabric that treats them alike: the builder folds them). */
  virtual bool same_for_every_group() const { return false; }
  /** Whether every request gets the same routing whatever its iteration, layer, microbatch, group or seed (then a
   *  stateless policy's step is planned once and reused). */
  virtual bool same_for_every_step() const { return false; }
};

/** A generator for one (seed, iteration, layer, microbatch, group, stream): steps are independent of the order in
 *  which they are asked for. */
std::mt19937_64 routing_rng(const RoutingRequest& request, std::uint64_t stream = 0);

/** Draws `n` token-expert assignments over experts with probabilities `p` (summing to 1) into `out` (multinomial, by
 *  conditional binomials). */
void draw_multinomial(std::mt19937_64& rng, double n, const std::vector<double>& p, std::vector<double>& out);

/** Fills `out` with `q`'s rows, each sample drawing from the same `p`; one draw per rank when q.rank_totals. */
void draw_rows(std::mt19937_64& rng, const RoutingRequest& q, const std::vector<double>& p, Routing& out);

/** Expert e's share under a Zipf law of exponent s over popularity ranks (rank_of[e] = 0 for the hottest). */
std::vector<double> zipf_shares(const std::vector<int>& rank_of, double s);

} // namespace cs
