// `static-ep`: DeepSpeed-MoE / Megatron-Core expert parallelism: experts / ep consecutive experts per rank, fixed;
// tokens go where their expert lives, over capacity dropped (or dropless), no rebalancing.
#include "models/moe/moe_policy.hpp"

namespace cs {
namespace {

class StaticEp : public MoePolicy {
public:
  void configure(ObjectReader& r) override { read_capacity_pad(r, pad_); }
  MoeStep plan(const MoeContext& c, const Routing& routing) override
  {
    return route_through(c, routing, contiguous_placement(c.experts, c.ranks), {}, pad_);
  }
  bool ranks_alike() const override { return true; }
  // Dropless, each rank's experts a block: what a rank sends goes to the block's owner, and the owner computes each
  // expert's total (a capacity would cut each rank's tokens to each expert).
  int block_sums_only(int experts, int ranks, double capacity_factor) const override
  {
    return capacity_factor > 0 || ranks < 1 || experts % ranks != 0 ? 0 : experts / ranks;
  }

private:
  bool pad_ = false;
};

} // namespace

CS_REGISTER_POLICY(MoePolicy, StaticEp, "moe", "static-ep",
                   "DeepSpeed/Megatron expert parallelism: fixed contiguous experts per rank, capacity factor");

} // namespace cs
