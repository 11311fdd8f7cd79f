#include "models/collectives/all_to_all_v.hpp"

#include "models/collectives/collective_algorithm.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace cs {

const ProtocolParams& all_to_all_v_protocol()
{
  for (const auto& p : protocols())
    if (p.name == "simple")
      return p;
  return protocols().back();
}

std::vector<int> machines_of(const PlatformSpec& platform, const std::vector<int>& hosts)
{
  const auto& topo = platform.topology;
  std::vector<int> out;
  for (int h : hosts)
    out.push_back(topo.vertex(topo.hosts()[h]).machine);
  return out;
}

double all_to_all_v_seconds(const std::vector<double>& m, const GroupShape& g, const ProtocolParams& p,
                            const std::vector<int>& machine)
{
  const int n = g.ranks;
  if (n < 2)
    return 0.0;
  std::vector<double> send(n, 0.0), recv(n, 0.0), send_out(n, 0.0), recv_in(n, 0.0);
  double any = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double b = m[static_cast<std::size_t>(i) * n + j];
      if (i == j || b <= 0)
        continue;
      any += b;
      if (machine[i] == machine[j]) {
        send[i] += b;
        recv[j] += b;
      } else {
        send_out[i] += b;
        recv_in[j] += b;
      }
    }
  // Per machine, summed from the per-rank totals (a map update per pair was most of this function's time).
  std::map<int, double> out_of, into;
  for (int i = 0; i < n; ++i) {
    if (send_out[i] > 0)
      out_of[machine[i]] += send_out[i];
    if (recv_in[i] > 0)
      into[machine[i]] += recv_in[i];
  }
  if (any <= 0)
    return 0.0;
  const double intra_rate = payload_rate(p, g.intra_bw), nic_rate = payload_rate(p, g.nics * g.nic_bw);
  // A GPU's own share of the machine's NICs (GPUs of the machine outside the group do not lend theirs).
  const double gpu_nic_rate = payload_rate(p, g.nic_bw * std::min(1.0, double(g.nics) / g.machine_gpus));
  double slowest = 0;
  for (int i = 0; i < n; ++i)
    slowest = std::max(
        {slowest, send[i] / intra_rate, recv[i] / intra_rate, send_out[i] / gpu_nic_rate, recv_in[i] / gpu_nic_rate});
  for (const auto& [machine_id, bytes] : out_of)
    slowest = std::max(slowest, bytes / nic_rate);
  for (const auto& [machine_id, bytes] : into)
    slowest = std::max(slowest, bytes / nic_rate);
  return p.base_latency + step_latency(p, g) + slowest;
}

std::vector<std::vector<int>> expand_all_to_all_v(TaskGraph& graph, StreamPool& pool, const PlatformSpec& platform,
                                                  const CollectiveRequest& req)
{
  const int n = static_cast<int>(req.hosts.size());
  if (req.matrix.size() != static_cast<std::size_t>(n) * n)
    throw std::invalid_argument("all-to-all-v needs ranks x ranks sizes");
  CollectiveChoice choice{"direct", all_to_all_v_protocol(), 0.0};
  CollectiveEmitter e{graph, pool, platform, req, choice, graph.intern("all-to-all-v/direct/simple")};
  constexpr int kSlots = 8; // concurrent sends per GPU
  std::vector<std::vector<int>> into(n);
  std::vector<int> slot(n, 0);
  for (int i = 0; i < n; ++i)
    for (int k = 1; k < n; ++k) { // peers in ring order from i + 1, so no GPU is everyone's first target
      const int j = (i + k) % n;
      const double b = req.matrix[static_cast<std::size_t>(i) * n + j];
      if (b > 0)
        into[j].push_back(e.send(i, j, 1 + (slot[i]++ % kSlots), b, 0));
    }
  std::vector<std::vector<int>> done(n);
  for (int r = 0; r < n; ++r) {
    std::vector<int> after = into[r];
    if (!req.ready.empty() && req.ready[r] >= 0)
      after.push_back(req.ready[r]);
    done[r] = {e.barrier(r, after)};
  }
  return done;
}

} // namespace cs
