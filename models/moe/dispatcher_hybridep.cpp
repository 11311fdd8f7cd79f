// HybridEP, NVIDIA's hierarchical dispatch in DeepEP (its hybrid-ep branch, Hybrid-EP_Implementation.md), as
// Megatron-Core's flex dispatcher runs it (--moe-flex-dispatcher-backend hybridep): over RDMA between nodes and over
// NVLink by TMA copies inside a node, a token crossing to another node once and forwarded there to each GPU holding
// one of its experts, so it moves what DeepEP's normal kernels move (node_forwarded_traffic). The permutation is fused
// into the dispatch and combine. Its kernels take fewer SMs than DeepEP's: `moe.hybridep_sms`, Megatron-Core's
// moe_hybridep_num_sms (16 by default), which compute beside an overlapped dispatch loses.
//
// Left out: its buffers (sized in its C++ buffer coordinators, not read here), which the memory reserve covers, and
// the all-gather of each rank's routing map before the first dispatch of a layer (tokens x experts bytes, under 1%
// of the dispatch's bytes for the rows we run).
#include "models/moe/token_dispatcher.hpp"

namespace cs {
namespace {

// Only its SM count differs from DeepEP's (moe.hybridep_sms, read by the callers through MoeParams::dispatcher_sms).
class HybridEpDispatcher : public NodeForwardingDispatcher {};

} // namespace

CS_REGISTER_TOKEN_DISPATCHER(
    HybridEpDispatcher, "hybridep",
    "HybridEP (flex backend): once per node over RDMA, forwarded over NVLink by TMA, permutation fused, fewer SMs");

} // namespace cs
