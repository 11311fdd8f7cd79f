#include "models/collectives/all_to_all_v.hpp"

#include "models/collectives/collective_algorithm.hpp"
#include "models/collectives/fluid_all_to_all_v.hpp"
#include "platform/shared_links.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace cs {
namespace {

constexpr int kSlots = 8;          // concurrent sends per GPU
constexpr int kRepairMachines = 8; // groups over fewer machines keep their per-pair flows

// A GPU's own share of its machine's NICs (GPUs of the machine outside the group do not lend theirs).
double gpu_nic_bandwidth(const GroupShape& g) { return g.nic_bw * std::min(1.0, double(g.nics) / g.machine_gpus); }

struct Flow {
  int from, to;
  double bytes;
};

// The off-machine bytes re-paired into few flows with each rank's totals kept: north-west corner over the ranks in
// order, skipping a destination on the source's own machine (that pair would ride NVLink, not the NICs). Empty when
// the greedy walk strands bytes that only a same-machine pair could carry.
std::optional<std::vector<Flow>> repaired_pairs(const std::vector<double>& m, const std::vector<int>& machine)
{
  const int n = static_cast<int>(machine.size());
  std::vector<double> out(n, 0.0), in(n, 0.0);
  double largest = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (machine[i] != machine[j]) {
        out[i] += m[std::size_t(i) * n + j];
        in[j] += m[std::size_t(i) * n + j];
      }
  for (int i = 0; i < n; ++i)
    largest = std::max(largest, out[i]);
  const double eps = 1e-9 * largest; // what rounding leaves behind
  std::vector<Flow> flows;
  int next = 0;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n && out[i] > eps; ++k) {
      const int j = (next + k) % n;
      if (machine[j] == machine[i] || in[j] <= eps)
        continue;
      const double b = std::min(out[i], in[j]);
      flows.push_back({i, j, b});
      out[i] -= b;
      in[j] -= b;
      next = j;
    }
  // What is left can only pair ranks of one machine (the corner's last source with itself, typically): route it
  // through a flow a -> b between other machines, as a -> j and i -> b, which keeps every rank's totals.
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n && out[i] > eps; ++j)
      for (std::size_t f = 0; f < flows.size() && out[i] > eps && in[j] > eps; ++f) {
        const Flow via = flows[f];
        if (machine[via.from] == machine[j] || machine[via.to] == machine[i] || via.bytes <= eps)
          continue;
        const double b = std::min({out[i], in[j], via.bytes});
        flows[f].bytes -= b;
        flows.push_back({via.from, j, b});
        flows.push_back({i, via.to, b});
        out[i] -= b;
        in[j] -= b;
      }
  for (int i = 0; i < n; ++i)
    if (out[i] > eps || in[i] > eps)
      return std::nullopt;
  flows.erase(std::remove_if(flows.begin(), flows.end(), [eps](const Flow& f) { return f.bytes <= eps; }), flows.end());
  return flows;
}

bool eligible(const PlatformSpec& platform, const std::vector<int>& machine, const std::vector<double>& m)
{
  if (!platform.fabric_non_blocking || !platform.background.empty() || platform.network_model != NetworkModel::IDEAL)
    return false;
  if (std::set<int>(machine.begin(), machine.end()).size() < static_cast<std::size_t>(kRepairMachines))
    return false;
  const std::size_t n = machine.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (machine[i] != machine[j] && !(m[i * n + j] > 0))
        return false;
  return true;
}

// Every member starts once the last is ready and ends once the last flow has arrived (the matrix is dense, so each
// rank sends to and hears from every other, and NCCL's kernel ends with both).
std::vector<std::vector<int>> expand_repaired(TaskGraph& graph, StreamPool& pool, const PlatformSpec& platform,
                                              const CollectiveRequest& req, const std::vector<int>& machine,
                                              const std::vector<Flow>& across)
{
  const int n = static_cast<int>(req.hosts.size());
  CollectiveChoice choice{"direct", all_to_all_v_protocol(), 0.0};
  // The emitter reads the hosts, labels and readiness only: the sizes (n x n) stay with `req`, not copied.
  CollectiveRequest gated;
  gated.kind = req.kind;
  gated.hosts = req.hosts;
  gated.labels = req.labels;
  CollectiveEmitter e{graph, pool, platform, gated, choice, graph.intern("all-to-all-v/repaired/simple")};
  std::vector<int> ready;
  for (int r : req.ready)
    if (r >= 0)
      ready.push_back(r);
  gated.ready.assign(n, e.barrier(0, ready));
  // Pairs inside a machine on kSlots streams per GPU, as per-pair flows go; the few re-paired ones on streams of
  // their own, so none waits behind an NVLink transfer.
  std::vector<int> slot(n, 0), flows;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double b = req.matrix[std::size_t(i) * n + j];
      if (i != j && machine[i] == machine[j] && b > 0)
        flows.push_back(e.send(i, j, 1 + (slot[i]++ % kSlots), b, 0));
    }
  std::fill(slot.begin(), slot.end(), 0);
  for (const Flow& f : across)
    flows.push_back(e.send(f.from, f.to, 1 + kSlots + (slot[f.from]++ % kSlots), f.bytes, 0));
  if (flows.empty())
    flows.push_back(gated.ready[0]);
  const int end = e.barrier(0, flows);
  std::vector<std::vector<int>> done(n);
  done[0] = {end};
  for (int r = 1; r < n; ++r)
    done[r] = {e.barrier(r, {end})};
  return done;
}

} // namespace

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
                            const std::vector<int>& machine, double fabric_seconds)
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
  const double gpu_nic_rate = payload_rate(p, gpu_nic_bandwidth(g));
  double slowest = 0;
  for (int i = 0; i < n; ++i)
    slowest = std::max(
        {slowest, send[i] / intra_rate, recv[i] / intra_rate, send_out[i] / gpu_nic_rate, recv_in[i] / gpu_nic_rate});
  for (const auto& [machine_id, bytes] : out_of)
    slowest = std::max(slowest, bytes / nic_rate);
  for (const auto& [machine_id, bytes] : into)
    slowest = std::max(slowest, bytes / nic_rate);
  return std::max(fabric_seconds, p.base_latency + step_latency(p, g) + slowest);
}

namespace {

// Whether a pair with bytes leaves its machine: only then can the links between switches carry it.
bool crosses_switches(const std::vector<double>& m, const Topology& topo, const std::vector<int>& hosts)
{
  const int n = static_cast<int>(hosts.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j && m[static_cast<std::size_t>(i) * n + j] > 0 && topo.hop_level(hosts[i], hosts[j]) > 0)
        return true;
  return false;
}

FluidAllToAllParams fluid_params(const ProtocolParams& p)
{
  FluidAllToAllParams fluid;
  fluid.slots = kSlots;
  fluid.efficiency = p.efficiency;
  fluid.rate_cap = p.rate_cap;
  fluid.overhead = p.base_latency + p.step_overhead; // what each of expand_all_to_all_v's transfers waits
  return fluid;
}

} // namespace

FluidAllToAll all_to_all_v_fabric_replay(const std::vector<double>& m, const PlatformSpec& platform,
                                         const std::vector<int>& hosts, const std::vector<int>& offsets,
                                         const ProtocolParams& p, const std::vector<double>& ready)
{
  const Topology& topo = platform.topology;
  if (!crosses_switches(m, topo, hosts))
    return {};
  return fluid_all_to_all_v(m, topo, hosts, disjoint_shifts(hosts, offsets, topo.host_count()), fluid_params(p), ready);
}

std::optional<std::size_t> all_to_all_v_fabric_signature(const std::vector<double>& m, const PlatformSpec& platform,
                                                         const std::vector<int>& hosts, const std::vector<int>& offsets,
                                                         const ProtocolParams& p)
{
  const Topology& topo = platform.topology;
  if (!crosses_switches(m, topo, hosts))
    return std::nullopt;
  return fluid_all_to_all_v_signature(m, topo, hosts, disjoint_shifts(hosts, offsets, topo.host_count()),
                                      fluid_params(p));
}

double all_to_all_v_fabric_seconds(const std::vector<double>& m, const PlatformSpec& platform,
                                   const std::vector<int>& hosts, const std::vector<int>& offsets,
                                   const ProtocolParams& p)
{
  return all_to_all_v_fabric_replay(m, platform, hosts, offsets, p, {}).seconds;
}

std::vector<std::pair<int, double>> all_to_all_v_switch_bytes(const std::vector<double>& m,
                                                              const PlatformSpec& platform,
                                                              const std::vector<int>& hosts,
                                                              const std::vector<int>& shifts)
{
  const Topology& topo = platform.topology;
  const int n = static_cast<int>(hosts.size());
  std::map<int, double> bytes; // by link direction: summed in order, read in order
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double b = m[static_cast<std::size_t>(i) * n + j];
      if (i == j || b <= 0)
        continue;
      for (int s : shifts) {
        const int from = hosts[i] + s, to = hosts[j] + s;
        if (from < 0 || to < 0 || from >= topo.host_count() || to >= topo.host_count())
          continue;
        const auto& route = topo.route(from, to);
        for (std::size_t k = 1; k + 1 < route.size(); ++k) // the NICs at either end are the ranks' own
          bytes[2 * route[k].link + (route[k].up ? 0 : 1)] += b;
      }
    }
  return {bytes.begin(), bytes.end()};
}

bool all_to_all_v_repairs(const PlatformSpec& platform, const std::vector<int>& hosts,
                          const std::vector<double>& matrix)
{
  const auto machine = machines_of(platform, hosts);
  return eligible(platform, machine, matrix) && repaired_pairs(matrix, machine).has_value();
}

std::vector<std::vector<int>> expand_all_to_all_v(TaskGraph& graph, StreamPool& pool, const PlatformSpec& platform,
                                                  const CollectiveRequest& req)
{
  const int n = static_cast<int>(req.hosts.size());
  if (req.matrix.size() != static_cast<std::size_t>(n) * n)
    throw std::invalid_argument("all-to-all-v needs ranks x ranks sizes");
  const auto machine = machines_of(platform, req.hosts);
  if (eligible(platform, machine, req.matrix))
    if (const auto across = repaired_pairs(req.matrix, machine))
      return expand_repaired(graph, pool, platform, req, machine, *across);
  CollectiveChoice choice{"direct", all_to_all_v_protocol(), 0.0};
  CollectiveEmitter e{graph, pool, platform, req, choice, graph.intern("all-to-all-v/direct/simple")};
  // A pair's flow starts once both ends are ready; a rank's part ends with its own sends and receives both (NCCL
  // runs them in one kernel per rank).
  std::vector<std::vector<int>> involved(n);
  std::vector<int> slot(n, 0);
  for (int i = 0; i < n; ++i)
    for (int k = 1; k < n; ++k) { // peers in ring order from i + 1, so no GPU is everyone's first target
      const int j = (i + k) % n;
      const double b = req.matrix[static_cast<std::size_t>(i) * n + j];
      if (b <= 0)
        continue;
      const int t = e.send(i, j, 1 + (slot[i]++ % kSlots), b, 0);
      if (!req.ready.empty() && req.ready[j] >= 0) // the receiver posts its buffer once its kernel runs
        graph.add_dependency(req.ready[j], t);
      involved[i].push_back(t);
      involved[j].push_back(t);
    }
  std::vector<std::vector<int>> done(n);
  for (int r = 0; r < n; ++r) {
    std::vector<int> after = involved[r];
    if (!req.ready.empty() && req.ready[r] >= 0)
      after.push_back(req.ready[r]);
    done[r] = {e.barrier(r, after)};
  }
  return done;
}

} // namespace cs
