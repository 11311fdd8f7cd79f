#include "workloads/replay/chakra_graph.hpp"

#include "models/collectives/collective_model.hpp"
#include "workloads/replay/replay_graph.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace cs {
namespace {

// The CPU thread or GPU stream a node runs on. Without recorded tids, one CPU thread, one compute stream and one
// stream for communication: ASTRA-sim's hardware resource runs one CPU op, one GPU kernel and one GPU
// communication at a time, which is this with one stream each.
std::string lane(const ChakraNode& n)
{
  if (n.cpu)
    return n.tid >= 0 ? "cpu thread " + std::to_string(n.tid) : "cpu";
  if (n.tid >= 0)
    return "gpu stream " + std::to_string(n.tid);
  return n.type == ChakraNode::COMPUTE ? "gpu compute" : "gpu comm";
}

} // namespace

std::string chakra_collective_kind(int comm_type)
{
  switch (comm_type) {
  case 0:
    return "all-reduce";
  case 2:
    return "all-gather";
  case 5:
    return "broadcast";
  case 6:
    return "all-to-all";
  case 7:
    return "reduce-scatter";
  default:
    return "";
  }
}

ChakraReplay build_chakra_replay(const ChakraTrace& t, const ChakraReplayOptions& o)
{
  ChakraReplay out;
  std::map<std::string, int> lanes;
  std::map<std::uint64_t, int> task_of;
  double first = 1e300, last = -1e300;
  // Every priced collective spans ranks 0..n-1: one group shape for all of them.
  std::vector<int> hosts(static_cast<std::size_t>(std::max(1, o.ranks)));
  std::iota(hosts.begin(), hosts.end(), 0);
  const GroupShape shape = hosts.size() < 2 ? GroupShape{} : group_shape(*o.platform, hosts);
  for (const std::size_t i : chakra_order(t)) {
    const ChakraNode& n = t.nodes[i];
    auto [it, fresh] = lanes.try_emplace(lane(n), -1);
    if (fresh)
      it->second = out.graph.add_stream(0, it->first);
    const bool p2p = n.type == ChakraNode::SEND || n.type == ChakraNode::RECV;
    const std::string kind = n.type == ChakraNode::COLLECTIVE ? chakra_collective_kind(n.comm_type) : p2p ? "p2p" : "";
    const bool priced = !n.cpu && !kind.empty() && n.comm_bytes > 0 && (o.model_collectives || n.duration == 0);
    double seconds = n.duration;
    int task = -1;
    if (priced && p2p) {
      // A send or receive moves comm_size between this rank (host 0) and its peer: the recorded one when it is
      // inside the group, else the next rank.
      const long long peer = n.type == ChakraNode::SEND ? n.comm_dst : n.comm_src;
      const int other = peer >= 1 && peer < static_cast<long long>(hosts.size()) ? static_cast<int>(peer) : 1;
      seconds = hosts.size() < 2 ? 0.0
                                 : choose_collective("p2p", "auto", n.comm_bytes,
                                                     group_shape(*o.platform, std::vector<int>{0, other}))
                                       .seconds;
      ++out.modeled_collectives;
    } else if (priced) {
      seconds = hosts.size() < 2 ? 0.0 : choose_collective(kind, "auto", n.comm_bytes, shape).seconds;
      ++out.modeled_collectives;
    }
    if (!n.cpu && n.type == ChakraNode::COMPUTE) {
      if (o.from != o.to)
        seconds = rescale_kernel(n.name, seconds, *o.from, *o.to);
      task = out.graph.add_compute(it->second, seconds, short_kernel_name(n.name), "",
                                   TaskLabels{}); // kernels share the GPU
      ++out.kernels;
    } else {
      task = out.graph.add_delay(it->second, seconds, short_kernel_name(n.name), TaskLabels{});
      (n.cpu ? out.cpu_ops : n.type == ChakraNode::COLLECTIVE ? out.collectives : out.other) += 1;
    }
    (n.cpu ? out.recorded_cpu_s : out.recorded_gpu_s) += n.duration;
    for (const auto d : n.deps)
      out.graph.add_dependency(task_of.at(d), task);
    task_of.emplace(n.id, task);
    if (n.start >= 0) {
      first = std::min(first, n.start);
      last = std::max(last, n.start + n.duration);
    }
  }
  if (last >= first)
    out.recorded_span_s = last - first;
  out.streams = static_cast<int>(lanes.size());
  out.graph.finalize();
  return out;
}

} // namespace cs
