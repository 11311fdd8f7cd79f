#include "models/collectives/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cs {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

// Bandwidth of a ring over the group: each GPU's port inside nodes; between nodes, `channels` rings cross
// through distinct NICs.
double ring_bandwidth(const GroupShape& g)
{
  return g.nodes > 1 ? std::min(g.intra_bw, g.channels * g.nic_bw) : g.intra_bw;
}

// One GPU's share of its node's NICs, when every GPU of the node sends off-node at once.
double per_gpu_inter_bandwidth(const GroupShape& g) { return std::min(g.intra_bw, g.nics * g.nic_bw / g.per_node); }

double step_latency(const ProtocolParams& p, const GroupShape& g)
{
  return p.step_overhead + (g.nodes > 1 ? g.inter_lat : g.intra_lat);
}

double payload_rate(const ProtocolParams& p, double link_bw)
{
  double r = link_bw * p.efficiency;
  return p.rate_cap > 0 ? std::min(r, p.rate_cap) : r;
}

} // namespace

double collective_time(const std::string& kind, const std::string& a, const ProtocolParams& p, double S,
                       const GroupShape& g)
{
  const int n = g.ranks;
  if (n <= 1)
    return p.base_latency;
  const double step = step_latency(p, g);
  if (a == "ring") {
    if (kind == "all-to-all" || kind == "p2p")
      return kInf;
    const double bw = payload_rate(p, ring_bandwidth(g));
    if (kind == "all-reduce")
      return p.base_latency + 2 * (n - 1) * step + 2.0 * (n - 1) / n * S / bw;
    if (kind == "broadcast") // pipelined along the ring in 8 chunks: n + 6 chunk-steps end to end
      return p.base_latency + (n + 6) * (step + S / 8 / bw);
    return p.base_latency + (n - 1) * step + double(n - 1) / n * S / bw; // reduce-scatter, all-gather
  }
  if (a == "tree") {
    if (kind != "all-reduce")
      return kInf;
    // Double binary tree, pipelined: reduce up and broadcast down, log2(n) levels each; NCCL's model gives trees
    // half the link rate (tuning.cc: "tree: bw *= 0.5").
    const double depth = std::ceil(std::log2(n));
    return p.base_latency + 2 * depth * step + S / (0.5 * payload_rate(p, ring_bandwidth(g)));
  }
  if (a == "rhd") {
    if (!power_of_two(n) || kind != "all-reduce")
      return kInf;
    // Recursive halving then doubling (Rabenseifner): log2(n) pairwise exchanges per phase; the large exchanges
    // pair ranks across nodes when the group spans several.
    const double bw = payload_rate(p, g.nodes > 1 ? per_gpu_inter_bandwidth(g) : g.intra_bw);
    const double lg = std::log2(n);
    return p.base_latency + 2 * lg * step + 2.0 * (n - 1) / n * S / bw;
  }
  if (a == "nvls") {
    // NVLink SHARP: each GPU pushes its buffer into the switch, which reduces and multicasts; a port carries
    // S (n + 1) / n each way. NCCL engages it above 4 GPUs, inside one node.
    if (kind != "all-reduce" || !g.nvls || n <= 4 || p.single_channel)
      return kInf;
    return p.base_latency + 2 * step + S * (n + 1) / n / (g.intra_bw * kNvlsEfficiency);
  }
  if (a == "direct" || a == "hierarchical") {
    if (kind != "all-to-all")
      return kInf;
    const double intra = (g.per_node - 1) * S / n;                   // bytes per GPU to its node's peers
    const double inter_node = g.per_node * (n - g.per_node) * S / n; // bytes per node leaving it
    const double intra_t = intra / payload_rate(p, g.intra_bw);
    const double inter_t = g.nodes > 1 ? inter_node / payload_rate(p, g.nics * g.nic_bw) : 0.0;
    if (a == "direct")
      return p.base_latency + step + std::max(intra_t, inter_t);
    if (g.nodes == 1)
      return kInf;
    // Two phases: regroup inside the node by destination rail, then rail-to-rail across nodes.
    const double phase1 = (g.per_node - 1) * S / g.per_node / payload_rate(p, g.intra_bw);
    return p.base_latency + 2 * step + phase1 + inter_t;
  }
  if (a == "p2p") {
    if (kind != "p2p")
      return kInf;
    return p.base_latency + step + S / payload_rate(p, g.nodes > 1 ? g.nic_bw : g.intra_bw);
  }
  throw std::invalid_argument("unknown collective algorithm '" + a + "'");
}

CollectiveChoice choose_collective(const std::string& kind, const std::string& algorithm, double bytes,
                                   const GroupShape& shape)
{
  const auto& kinds = collective_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    throw std::invalid_argument("unknown collective '" + kind + "'");
  const auto& algos = collective_algorithms();
  if (std::find(algos.begin(), algos.end(), algorithm) == algos.end())
    throw std::invalid_argument("unknown collective algorithm '" + algorithm + "'");
  if (!(bytes >= 0))
    throw std::invalid_argument("collective size must not be negative");
  CollectiveChoice best;
  best.seconds = kInf;
  for (const auto& a : algos) {
    if (a == "auto" || (algorithm != "auto" && a != algorithm))
      continue;
    // Like NCCL's tuner, "auto" picks among NCCL's own algorithms: not rhd (NCCL has none), and not our rank-level
    // trees across nodes (NCCL builds its trees over nodes; ours would contend on the NICs; docs/collectives.md).
    if (algorithm == "auto" && (a == "rhd" || (a == "tree" && shape.nodes > 1)))
      continue;
    for (const auto& p : protocols()) {
      double t = collective_time(kind, a, p, bytes, shape);
      if (t < best.seconds)
        best = CollectiveChoice{a, p, t};
    }
  }
  if (!std::isfinite(best.seconds))
    throw std::invalid_argument("algorithm '" + algorithm + "' cannot run " + kind + " on this group");
  return best;
}

} // namespace cs
