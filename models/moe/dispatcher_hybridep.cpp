// HybridEP, NVIDIA's hierarchical dispatch in DeepEP (its hybrid-ep branch, Hybrid-EP_Implementation.md), as
// Megatron-Core's flex dispatcher runs it (--moe-flex-dispatcher-backend hybridep): over RDMA between nodes and over
// NVLink by TMA copies inside a node, a token crossing to another node once and forwarded there to each GPU holding
// one of its experts, so it moves what DeepEP's normal kernels move (node_forwarded_traffic). The permutation is fused
// into the dispatch and combine. Its kernels take fewer SMs than DeepEP's: `moe.hybridep_sms`, Megatron-Core's
// moe_hybridep_num_sms (16 by default), which compute beside an overlapped dispatch loses.
//
// Its buffers are sized for the worst case, every token of the group bound for one GPU, as its buffer coordinators
// allocate them (csrc/hybrid_ep/buffer/intranode.cu and internode.cu in DeepEP's hybrid-ep code) [recon: the version
// Megatron-Core's containers ship is not stated]. Left out: the all-gather of each rank's routing map before a layer's
// first dispatch (a byte per token and expert, under 1% of the dispatch for the rows we run).
#include "models/moe/token_dispatcher.hpp"

#include <algorithm>

namespace cs {
namespace {

// Its traffic is DeepEP's; its SM count (moe.hybridep_sms, through MoeParams::dispatcher_sms) and buffers are its own.
class HybridEpDispatcher : public NodeForwardingDispatcher {
public:
  double buffer_bytes(const DispatchBufferShape& s) const override
  {
    if (s.ranks <= 1)
      return 0;
    // T tokens a rank, R ranks of the group on a node, N nodes; each token's probabilities over the experts a node
    // holds (E R), its FP8 scales a value per 128 (allocated whatever the dtype).
    const double T = s.tokens, H = s.hidden, d = s.hidden_bytes / std::max(1.0, s.hidden);
    const double R = std::min(s.ranks, s.gpus_per_node), N = std::max(1, s.ranks / s.gpus_per_node);
    const double probs = s.experts_per_rank * R * 4, scales = H / 128 * 4;
    const double worst = T * R * N; // the NVLink side's receive buffers: every token of the group
    // Dispatch: tokens, probabilities, scales; combine: bf16 tokens and probabilities; one node shares the two.
    const double combine = worst * (H * 2 + probs);
    double bytes =
        worst * scales + (N > 1 ? worst * (H * d + probs) + combine : std::max(combine, worst * (H * d + probs)));
    if (N > 1) // RDMA: the rank's own tokens staged, and N - 1 nodes' worth each way
      bytes +=
          T * (H * d + probs * N + scales) + T * (N - 1) * (H * d + probs + scales) + 2 * T * (N - 1) * (H * 2 + probs);
    return bytes;
  }
};

} // namespace

CS_REGISTER_TOKEN_DISPATCHER(
    HybridEpDispatcher, "hybridep",
    "HybridEP (flex backend): once per node over RDMA, forwarded over NVLink by TMA, permutation fused, fewer SMs");

} // namespace cs
