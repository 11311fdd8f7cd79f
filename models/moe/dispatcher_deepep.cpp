// DeepEP's normal (high-throughput) kernels, as Megatron-Core's flex dispatcher runs them: a token goes to another
// node once, over RDMA to the GPU of its sender's rail there, which forwards it over NVLink to each GPU holding one of
// its experts; within a node, and on the forwarding side, it goes once per GPU however many of that GPU's experts it
// chose. The permutation into expert order is fused into the dispatch and combine kernels. Node-limited routing
// (DeepSeek-V3: each token's experts on at most 4 nodes) bounds the nodes a token is sent to.
//
// Reconstructed: the routing gives bytes per (sender, receiver) pair, not per token, so the deduplication is the
// expected one under uniform choice of top_k of `experts` experts spread evenly: a GPU or node holding e of them gets a
// token with probability 1 - C(E-e, k)/C(E, k) against k e / E copies, and with node-limited routing at most
// max_nodes_per_token of the group's nodes. DeepEP's kernels run on SMs of their own (`moe.deepep_sms`, 20 by default
// of an H100's 132), which compute beside them loses; without overlap they take nothing from it.
#include "models/moe/token_dispatcher.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

namespace cs {
namespace {

// The share of a token's copies to a holder of `held` of the `experts` experts that survive deduplication: the
// probability it picks any of them over the copies it sends them, under uniform top-k choice.
double dedup(double held, double experts, int top_k, double hit_cap)
{
  if (held <= 0)
    return 1.0;
  double miss = 1.0;
  for (int t = 0; t < top_k; ++t)
    miss *= std::max(0.0, experts - held - t) / (experts - t);
  const double hit = std::min(1.0 - miss, hit_cap), copies = top_k * held / experts;
  return copies > 0 ? std::min(1.0, hit / copies) : 1.0;
}

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

class DeepEpDispatcher : public TokenDispatcher {
public:
  bool fuses_permutation() const override { return true; }

  std::vector<double> traffic(const std::vector<double>& routed, const DispatchGroup& g) const override
  {
    const int n = g.ranks;
    std::map<int, std::vector<int>> on_node; // node -> its EP ranks, in rank order
    for (int r = 0; r < n; ++r)
      on_node[g.machine[r]].push_back(r);
    const double E = g.experts, per_rank = E / n;
    const int nodes = static_cast<int>(on_node.size());
    const double node_cap =
        g.max_nodes_per_token > 0 && g.max_nodes_per_token < nodes ? double(g.max_nodes_per_token) / nodes : 1.0;
    const double per_gpu = dedup(per_rank, E, g.top_k, 1.0);
    std::vector<double> out(routed.size(), 0.0);
    auto at = [n](std::vector<double>& m, int i, int j) -> double& { return m[std::size_t(i) * n + j]; };
    for (int i = 0; i < n; ++i) {
      const auto& mine = on_node[g.machine[i]];
      const int lane = static_cast<int>(std::find(mine.begin(), mine.end(), i) - mine.begin());
      for (const auto& [node, ranks] : on_node) {
        if (node == g.machine[i]) { // NVLink, once per GPU
          for (int j : ranks)
            at(out, i, j) += routed[std::size_t(i) * n + j] * per_gpu;
          continue;
        }
        const double per_node = dedup(per_rank * ranks.size(), E, g.top_k, node_cap);
        const int peer = ranks[std::min<std::size_t>(lane, ranks.size() - 1)]; // the sender's rail on that node
        for (int j : ranks) {
          const double bytes = routed[std::size_t(i) * n + j];
          at(out, i, peer) += bytes * per_node; // RDMA, once per node
          if (j != peer)
            at(out, peer, j) += bytes * per_gpu; // forwarded over NVLink
        }
      }
    }
    return out;
  }
  double sm_share(double comm_sm_fraction, int sms, int device_sms) const override
  {
    return device_sms > 0 ? std::min(0.9, double(sms) / device_sms) : comm_sm_fraction;
  }
  double buffer_bytes(int ranks, int gpus_per_node, double hidden_bytes, int sms) const override
  {
    return deepep_buffer_bytes(ranks, gpus_per_node, hidden_bytes, sms);
  }
};

} // namespace

CS_REGISTER_TOKEN_DISPATCHER(
    DeepEpDispatcher, "deepep",
    "DeepEP normal kernels: once per node over RDMA, forwarded over NVLink, permutation fused");

} // namespace cs
