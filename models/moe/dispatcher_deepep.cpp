// DeepEP's normal (high-throughput) kernels, as Megatron-Core's flex dispatcher runs them: a token goes to another
// node once, over RDMA to the GPU of its sender's rail there, which forwards it over NVLink to each GPU holding one of
// its experts; within a node, and on the forwarding side, it goes once per GPU however many of that GPU's experts it
// chose (node_forwarded_traffic, shared with HybridEP). The permutation into expert order is fused into the dispatch
// and combine kernels. Node-limited routing (DeepSeek-V3: each token's experts on at most 4 nodes) bounds the nodes a
// token is sent to. DeepEP's kernels run on SMs of their own (`moe.deepep_sms`, 20 by default of an H100's 132), which
// compute beside them loses; without overlap they take nothing from it.
#include "models/moe/token_dispatcher.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace cs {
namespace {

// The receive-queue depths (tokens a channel buffers per peer) of DeepEP's recommended configs by EP size
// (deep_ep/buffer.py, get_dispatch_config and get_combine_config, which agree on them): NVLink, then RDMA. A size it
// does not list takes the next listed one [recon: DeepEP asserts instead], past the largest the largest.
struct QueueDepths {
  int ranks, nvl_tokens, rdma_tokens;
};
constexpr QueueDepths kDeepEpQueues[] = {{2, 256, 128},   {4, 256, 128},  {8, 256, 128},  {16, 288, 128},
                                         {24, 288, 128},  {32, 288, 128}, {64, 288, 128}, {128, 560, 128},
                                         {144, 720, 128}, {160, 720, 128}};

// DeepEP's Config::get_nvl_buffer_size_hint and get_rdma_buffer_size_hint (csrc/config.hpp): per channel (two SMs)
// and peer, a queue of tokens with their source metadata (8 bytes), top-k indices and weights and FP8 scales (128
// slots each), the RDMA side doubled for sending and receiving, plus 1 MiB of slack; each rounded up to 128 bytes.
double deepep_buffer_bytes(int ranks, int gpus_per_node, double hidden_bytes, int sms)
{
  if (ranks <= 1)
    return 0;
  const QueueDepths* q = &kDeepEpQueues[std::size(kDeepEpQueues) - 1];
  for (const auto& d : kDeepEpQueues)
    if (d.ranks >= ranks) {
      q = &d;
      break;
    }
  const double channels = sms / 2, per_token_extra = 8 + 128 * 8 + 128 * 4 + 128 * 4;
  const double nvl_peers = std::min(ranks, gpus_per_node), rdma_peers = std::max(1, ranks / gpus_per_node);
  auto align = [](double b) { return std::ceil(b / 128) * 128; };
  const double nvl = align(channels * nvl_peers * (2 * rdma_peers + 3) * 4 +
                           channels * nvl_peers * q->nvl_tokens * (hidden_bytes + per_token_extra));
  if (ranks <= gpus_per_node) // one node: NVLink alone
    return nvl;
  const double rdma =
      align(channels * rdma_peers * (gpus_per_node * 2 + 2) * 2 * 4 +
            channels * rdma_peers * q->rdma_tokens * 2 * (hidden_bytes + per_token_extra + 16) + 1048576);
  return nvl + rdma;
}

class DeepEpDispatcher : public NodeForwardingDispatcher {
public:
  double buffer_bytes(const DispatchBufferShape& s) const override
  {
    return deepep_buffer_bytes(s.ranks, s.gpus_per_node, s.hidden_bytes, s.sms);
  }
};

} // namespace

CS_REGISTER_TOKEN_DISPATCHER(
    DeepEpDispatcher, "deepep",
    "DeepEP normal kernels: once per node over RDMA, forwarded over NVLink, permutation fused");

} // namespace cs
