#include "models/collectives/collective_algorithm.hpp"

#include <algorithm>
#include <map>

namespace cs {

int CollectiveEmitter::machine(int rank) const
{
  const Topology& t = platform.topology;
  return t.vertex(t.hosts().at(req.hosts[rank])).machine;
}

std::vector<std::vector<int>> CollectiveEmitter::ranks_by_machine() const
{
  std::map<int, std::vector<int>> by_machine;
  for (int r = 0; r < ranks(); ++r)
    by_machine[machine(r)].push_back(r);
  std::vector<std::vector<int>> out;
  for (auto& [m, members] : by_machine)
    out.push_back(std::move(members));
  return out;
}

int CollectiveEmitter::send(int from_rank, int to_rank, int channel, double payload, int step, double efficiency,
                            double fixed_overhead, double rate)
{
  const ProtocolParams& p = choice.protocol;
  const double overhead = fixed_overhead >= 0 ? fixed_overhead : p.step_overhead + (step == 0 ? p.base_latency : 0.0);
  const double eff = efficiency > 0 ? efficiency : p.efficiency;
  const int stream = pool.get(req.hosts[from_rank], channel);
  const int t =
      graph.add_transfer(stream, req.hosts[from_rank], req.hosts[to_rank], payload / eff, graph.names()[name],
                         req.labels, overhead, rate > 0 && (p.rate_cap <= 0 || rate < p.rate_cap) ? rate : p.rate_cap);
  if (!req.ready.empty() && req.ready[from_rank] >= 0 && gated.insert(stream).second)
    graph.add_dependency(req.ready[from_rank], t);
  return t;
}

int CollectiveEmitter::barrier(int rank, const std::vector<int>& after)
{
  const int t = graph.add_delay(pool.get(req.hosts[rank], 1000), 0.0, graph.names()[name], req.labels);
  for (int a : after)
    graph.add_dependency(a, t);
  return t;
}

const std::vector<std::pair<std::string, const CollectiveAlgorithm*>>& collective_algorithm_list()
{
  // One instance per algorithm, made once and kept for the process.
  static std::vector<std::unique_ptr<CollectiveAlgorithm>> owned;
  static const auto list = [] {
    std::vector<std::pair<std::string, const CollectiveAlgorithm*>> out;
    const auto& reg = Registry<CollectiveAlgorithm>::instance();
    for (const auto& name : reg.names()) {
      owned.push_back(reg.create(name));
      out.emplace_back(name, owned.back().get());
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.second->preference() < b.second->preference(); });
    return out;
  }();
  return list;
}

double ring_bandwidth(const GroupShape& g)
{
  if (g.nodes == 1)
    return g.intra_bw;
  // Per step every GPU sends one chunk per channel: over NVLink to a successor in its node, through its NIC (a
  // separate path) where its channel leaves the node. With a channel per GPU each GPU is one channel's exit, so its
  // NVLink port carries one chunk fewer.
  const int c = g.channels;
  const double nvlink_chunks = c == g.per_node ? c - 1 : c;
  return c / std::max(nvlink_chunks / g.intra_bw, 1.0 / g.nic_bw);
}

double per_gpu_inter_bandwidth(const GroupShape& g) { return std::min(g.intra_bw, g.nics * g.nic_bw / g.per_node); }

double step_latency(const ProtocolParams& p, const GroupShape& g)
{
  return p.step_overhead + (g.nodes > 1 ? g.inter_lat : g.intra_lat);
}

double payload_rate(const ProtocolParams& p, double link_bw)
{
  const double r = link_bw * p.efficiency;
  return p.rate_cap > 0 ? std::min(r, p.rate_cap) : r;
}

} // namespace cs
