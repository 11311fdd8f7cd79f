#include "models/collectives/collective.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace cs {

const std::vector<std::string>& collective_kinds()
{
  static const std::vector<std::string> k = {"all-reduce", "reduce-scatter", "all-gather",
                                             "broadcast",  "all-to-all",     "p2p"};
  return k;
}

double busbw_factor(const std::string& kind, int n)
{
  if (kind == "all-reduce")
    return 2.0 * (n - 1) / n;
  if (kind == "reduce-scatter" || kind == "all-gather" || kind == "all-to-all")
    return double(n - 1) / n;
  return 1.0; // broadcast, reduce, p2p
}

const std::vector<ProtocolParams>& protocols()
{
  // Reconstructed from nccl-tests measurements on DGX-A100 (validation.md §1-2; docs/collectives.md):
  // - ll: a ring's small-message time is 6.05 us + 2(n-1) x 1.975 us (fit to nccl-tests#123: 10 us at 2 GPUs,
  //   33.7 us at 8); with the 1.2 us NVSwitch path latency, 0.775 us per step remains. One channel moving at
  //   most 25 GB/s of payload (the 1 MiB point: 101.9 us, busbw 18.0).
  // - simple: all channels, 96.6% of the link rate (A100: 232 of 240 GB/s achievable NVLink) and, on a ring,
  //   13.3 us per step, both fit to the six points of 64 MiB and more in the two public 8 x A100 sweeps
  //   (stas00: 64 MiB, 512 MiB, 16 GiB; Azure: 128 MiB, 1 GiB, 8 GiB). Of the 13.3 us, 5.51 is what the
  //   protocol choice sees (an earlier fit to 8 and 64 MiB, whose LL128/Simple switch, between 32 and 64 MiB, is
  //   where NCCL's own tuning table puts it: ~23 MB on 8 A100); the other 7.8 us is the ring's chunk pipeline,
  //   which NCCL's tuner leaves out of its model and so does not choose by (ring_fill).
  // - ll128: placed between them by NCCL's own tuning table (tuning.cc), which gives LL128 baseLat 14.0 us against
  //   LL's 6.6 (so ours is 6.05 + 7.4), an NVLink ring step of 1.9 us between LL's 0.6 and Simple's 3.4 (mapped
  //   linearly onto our fitted 0.775 and 5.51: 2.97 us), and 0.92 of Simple's bandwidth (120 of 128 bytes carry
  //   payload). All channels, like Simple. NCCL runs it for rings and trees only.
  static const std::vector<ProtocolParams> p = {
      {"ll", 6.05e-6, 0.775e-6, 1.0, 25e9, true},
      {"simple", 6.05e-6, 5.51e-6, 0.966, 0.0, false, 7.8e-6},
      {"ll128", 13.45e-6, 2.97e-6, 0.966 * 0.92, 0.0, false},
  };
  return p;
}

int StreamPool::get(int host, int channel)
{
  auto key = std::make_pair(host, channel);
  auto it = streams_.find(key);
  if (it != streams_.end())
    return it->second;
  int s = graph_.add_stream(host, channel == 0 ? prefix_ : prefix_ + std::to_string(channel));
  streams_.emplace(key, s);
  return s;
}

int ring_channels(const PlatformSpec& platform, int nodes, int per_node)
{
  const int nics = platform.cpu_cluster ? 1 : platform.nics_per_machine;
  return nodes > 1 ? std::max(1, std::min(nics, per_node)) : 1;
}

GroupShape group_shape(const PlatformSpec& platform, const std::vector<int>& hosts)
{
  const Topology& t = platform.topology;
  GroupShape g;
  g.ranks = static_cast<int>(hosts.size());
  std::map<int, int> per_machine;
  for (int h : hosts)
    ++per_machine[t.vertex(t.hosts().at(h)).machine];
  g.nodes = static_cast<int>(per_machine.size());
  g.per_node = g.ranks / g.nodes;
  // Intra-node: the first pair of ranks sharing a machine; inter-node: the first pair that does not. With one rank per
  // machine no pair shares one, and the search stops at the first pair (it went through every pair: a quarter of a
  // planner run over 512 GPUs, whose data-parallel groups span as many machines as ranks).
  const bool shares_machine = g.nodes < g.ranks;
  auto found = [&] { return (g.intra_bw > 0 || !shares_machine) && (g.nic_bw > 0 || g.nodes == 1); };
  for (std::size_t i = 0; i < hosts.size() && !found(); ++i)
    for (std::size_t j = i + 1; j < hosts.size() && !found(); ++j) {
      bool same = t.hop_level(hosts[i], hosts[j]) == 0;
      if (same && g.intra_bw == 0) {
        g.intra_bw = t.route_bandwidth(hosts[i], hosts[j]);
        g.intra_lat = t.route_latency(hosts[i], hosts[j]);
      } else if (!same && g.nic_bw == 0) {
        g.nic_bw = t.route_bandwidth(hosts[i], hosts[j]);
        g.inter_lat = t.route_latency(hosts[i], hosts[j]);
      }
    }
  // A ring step waits for its slowest hop, and each step's critical path can stay on it: between nodes, the step
  // latency is that of the slowest pair of neighbouring machines (the ring's wrap included), which crosses the
  // spine once the group spans several leaves.
  if (g.nodes > 2) {
    std::vector<int> first_host; // one rank's host per machine, in machine order
    std::map<int, int> seen;
    for (int h : hosts)
      seen.emplace(t.vertex(t.hosts().at(h)).machine, h);
    for (const auto& [m, h] : seen)
      first_host.push_back(h);
    for (std::size_t i = 0; i < first_host.size(); ++i)
      g.inter_lat = std::max(g.inter_lat, t.route_latency(first_host[i], first_host[(i + 1) % first_host.size()]));
  }
  if (g.intra_bw == 0) { // one rank per machine: the NIC is every hop
    g.intra_bw = g.nic_bw;
    g.intra_lat = g.inter_lat;
  }
  g.nics = platform.cpu_cluster ? 1 : platform.nics_per_machine;
  g.channels = ring_channels(platform, g.nodes, g.per_node);
  g.nvls = platform.nvls;
  if (platform.device && platform.device->nvls_efficiency > 0)
    g.nvls_efficiency = platform.device->nvls_efficiency;
  g.machine_gpus = std::max(1, platform.hosts_per_machine);
  return g;
}

} // namespace cs
