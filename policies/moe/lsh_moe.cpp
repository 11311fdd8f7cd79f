// `lsh-moe` (Nie et al., NeurIPS'24): before dispatch, tokens are hashed with cross-polytope LSH (a random rotation,
// then the arg-max signed coordinate) into buckets, and only each bucket's centroid is sent and computed; results are
// scattered back to the bucket's tokens with the residual (token - centroid) added as error compensation. The
// all-to-alls shrink by the compression ratio (policies.md section 5: speed-up ~ 1 / (1 - f_a2a (1 - r)); the experts
// stay priced on every token), and the hashing (one GEMM by the rotation per hash table) is added [recon: its cost is
// priced at the expert GEMMs' rate].
#include "models/moe/moe_policy.hpp"

namespace cs {
namespace {

class LshMoe : public MoePolicy {
public:
  void configure(ObjectReader& r) override
  {
    r.field("compression", ratio_, "centroids per token sent (the paper's compression rate; 0.2 = 5x fewer)")
        .field("hash_tables", tables_, "LSH hash tables (rotations) per token")
        .field("hash_dims", dims_, "rotated dimensions per table");
    read_capacity_pad(r, pad_);
    r.require(ratio_ > 0 && ratio_ <= 1, "compression", "compression must be in (0, 1]");
    r.require_positive("hash_tables", tables_);
    r.require_at_most("hash_tables", tables_, 64);
    r.require_positive("hash_dims", dims_);
    r.require_at_most("hash_dims", dims_, 1 << 16);
  }
  MoeStep plan(const MoeContext& c, const Routing& routing) override
  {
    MoeStep s = route_through(c, routing, contiguous_placement(c.experts, c.ranks), {}, pad_);
    s.wire_scale = ratio_; // experts stay priced on every token, as policies.md's model of the paper counts them
    // Per rank: the rotations (tokens x hidden x dims FLOPs per table, as a GEMM at the expert GEMM's rate, taken as
    // one expert token costs) and the compensation (a pass over the tokens), forward; backward passes gradients
    // straight through the centroids and needs only the scatter.
    const double tokens = c.samples_per_rank * c.tokens_per_sample;
    const double expert_flops_per_token = 2.0 * c.expert_parameters;
    const double per_token_s = c.expert_seconds(tokens) / tokens;
    const double hash_flops = 2.0 * c.hidden * dims_ * tables_;
    const double hash_s = tokens * per_token_s * hash_flops / expert_flops_per_token;
    s.extra_forward_s.assign(c.ranks, hash_s);
    s.extra_backward_s.assign(c.ranks, 0.0);
    return s;
  }

private:
  double ratio_ = 0.2;
  int tables_ = 1;
  int dims_ = 128;
  bool pad_ = false;
};

} // namespace

CS_REGISTER_POLICY(MoePolicy, LshMoe, "moe", "lsh-moe",
                   "LSH-MoE: send bucket centroids (all-to-all x compression) plus the hashing [recon costs]");

} // namespace cs
