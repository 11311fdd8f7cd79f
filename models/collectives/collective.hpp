// Collective operations: nccl-tests' size conventions, the group's shape on a platform, protocol parameters.
#pragma once

#include "core/task_graph.hpp"
#include "models/collectives/nvls_model.hpp"
#include "platform/platform_spec.hpp"

#include <map>
#include <string>
#include <vector>

namespace cs {

/** all-reduce, reduce-scatter, all-gather, broadcast, all-to-all, p2p (send/recv between ranks 0 and 1). */
const std::vector<std::string>& collective_kinds();

/** nccl-tests' bus-bandwidth factor: busbw = algbw x factor (doc/PERFORMANCE.md). */
double busbw_factor(const std::string& kind, int ranks);

/** What the closed forms need to know about a group on a platform. All bandwidths are what the links carry. */
struct GroupShape {
  int ranks = 1;
  int nodes = 1;        // machines spanned
  int per_node = 1;     // ranks per machine (uniform)
  int channels = 1;     // rings that cross nodes through distinct NICs
  double intra_bw = 0;  // one GPU's port inside a node (bytes/s per direction)
  double intra_lat = 0; // path latency between two GPUs of a node
  double nic_bw = 0;    // one NIC (bytes/s per direction)
  int nics = 0;         // NICs per machine
  double inter_lat = 0; // path latency between GPUs of different machines
  bool nvls = false;    // the nodes' switches can reduce (NVLink SHARP), whether or not the group spans nodes
  double nvls_efficiency = kNvlsEfficiency; // the share of the port rate NVLS reaches (the device's, else Hopper's)
  int machine_gpus = 1;                     // GPUs per machine (all of them, not only the group's): they share its NICs
};

/** Reads the shape of `hosts` (rank order) off a platform. */
GroupShape group_shape(const PlatformSpec& platform, const std::vector<int>& hosts);

/** Rings that cross between machines through distinct NICs, for a group of `nodes` machines x `per_node` ranks. */
int ring_channels(const PlatformSpec& platform, int nodes, int per_node);

/** An NCCL-like protocol: fixed costs and how fast payload moves. Reconstructed, see docs/collectives.md. */
struct ProtocolParams {
  std::string name;
  double base_latency = 0;  // per collective (launch, setup)
  double step_overhead = 0; // per algorithm step, on top of the path latency
  double efficiency = 1;    // payload share of the link rate (flags, headers)
  double rate_cap = 0;      // bytes/s one channel moves at most (0 = link rate)
  bool single_channel = false;
  double ring_fill = 0; // per ring step, paid by the chunk pipeline but left out of NCCL's tuner model
};

/** The protocols the tuner chooses from: "ll" (low latency, one channel), "simple" (full bandwidth) and "ll128"
 *  (between them; rings and trees only, as in NCCL). */
const std::vector<ProtocolParams>& protocols();

/** One collective to expand into a task graph. */
struct CollectiveRequest {
  std::string kind = "all-reduce";
  std::string algorithm = "auto";
  std::vector<int> hosts;     // ranks, in order
  double bytes = 0;           // nccl-tests size: per-rank buffer (all-reduce, broadcast, p2p), total (RS, AG),
                              // per-rank send total (all-to-all)
  int root = 0;               // broadcast root
  std::vector<double> matrix; // all-to-all-v: ranks x ranks bytes (row i sent by rank i); empty = even
  std::vector<int> ready;     // per rank: a task to wait for (-1 = none); empty = none
  TaskLabels labels;
};

/** Per (host, channel) communication streams, created on first use and reused by later collectives. */
class StreamPool {
public:
  explicit StreamPool(TaskGraph& graph, std::string prefix = "comm") : graph_(graph), prefix_(std::move(prefix)) {}
  int get(int host, int channel);
  /** Uses an existing stream for (host, channel). */
  void adopt(int host, int channel, int stream) { streams_[{host, channel}] = stream; }

private:
  TaskGraph& graph_;
  std::string prefix_; // stream names: prefix, prefix1, prefix2, ...
  std::map<std::pair<int, int>, int> streams_;
};

} // namespace cs
