// Megatron-Core's `allgather` token dispatcher: every EP rank gathers every token of the group (each once, whatever
// its experts) and keeps those routed to its own; the combine is the matching reduce-scatter. Its traffic does not
// depend on the routing: each rank sends its tokens to every other rank.
#include "models/moe/token_dispatcher.hpp"

namespace cs {
namespace {

class AllGatherDispatcher : public TokenDispatcher {
public:
  std::vector<double> traffic(const std::vector<double>& routed, const DispatchGroup& g) const override
  {
    const int n = g.ranks;
    std::vector<double> out(routed.size(), 0.0);
    for (int i = 0; i < n; ++i) {
      double copies = 0; // the bytes of rank i's routed copies: top_k per token
      for (int j = 0; j < n; ++j)
        copies += routed[std::size_t(i) * n + j];
      const double tokens = copies / g.top_k;
      for (int j = 0; j < n; ++j)
        out[std::size_t(i) * n + j] = tokens;
    }
    return out;
  }
};

} // namespace

CS_REGISTER_TOKEN_DISPATCHER(AllGatherDispatcher, "allgather",
                             "every rank gathers every token of the EP group once (Megatron-Core's allgather)");

} // namespace cs
