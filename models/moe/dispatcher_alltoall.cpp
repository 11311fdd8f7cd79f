// Megatron-Core's `alltoall` token dispatcher: tokens permuted into expert order, one copy per routed (token, expert)
// pair sent by an all-to-all-v over the EP group, and the inverse for the combine.
#include "models/moe/token_dispatcher.hpp"

namespace cs {
namespace {

class AllToAllDispatcher : public TokenDispatcher {
public:
  std::vector<double> traffic(const std::vector<double>& routed, const DispatchGroup&) const override { return routed; }
};

} // namespace

CS_REGISTER_TOKEN_DISPATCHER(AllToAllDispatcher, "alltoall",
                             "one copy per routed (token, expert) pair over an all-to-all-v (Megatron-Core's default)");

} // namespace cs
