// Gradient all-reduce with NCCL's ring algorithm, and with whatever algorithm NCCL's tuner would pick.
#include "base/registry.hpp"
#include "models/collectives/collective_model.hpp"
#include "policies/sync/gradient_sync.hpp"

namespace cs {
namespace {

std::vector<std::vector<int>> all_reduce(TaskGraph& graph, StreamPool& streams, const PlatformSpec& platform,
                                         const SyncRequest& r, const std::string& algorithm)
{
  CollectiveRequest req;
  req.kind = "all-reduce";
  req.algorithm = algorithm;
  req.hosts = r.hosts;
  req.bytes = r.bytes;
  req.ready = r.ready;
  req.labels = r.labels;
  auto choice = choose_collective(req.kind, algorithm, r.bytes, group_shape(platform, r.hosts));
  return expand_collective(graph, streams, platform, req, choice);
}

} // namespace

/** The bandwidth-optimal ring (Patarasuk & Yuan 2009; NCCL's Ring): 2(n-1) steps in which every member sends an
 *  n-th of the bucket to its successor, over as many rings (channels) as a node has NICs when the group spans
 *  nodes; the protocol (ll or simple) is the tuner's. Reduction arithmetic is not charged (NCCL overlaps it). */
class RingAllReduce : public GradientSync {
public:
  std::vector<std::vector<int>> synchronize(TaskGraph& graph, StreamPool& streams, const PlatformSpec& platform,
                                            const SyncRequest& r) const override
  {
    return all_reduce(graph, streams, platform, r, "ring");
  }
};

/** NCCL-like: the algorithm (ring, tree, rhd, nvls) and protocol the closed forms rank fastest for each bucket. */
class TunedAllReduce : public GradientSync {
public:
  std::vector<std::vector<int>> synchronize(TaskGraph& graph, StreamPool& streams, const PlatformSpec& platform,
                                            const SyncRequest& r) const override
  {
    return all_reduce(graph, streams, platform, r, "auto");
  }
};

CS_REGISTER_POLICY(GradientSync, RingAllReduce, "sync", "ring-allreduce",
                   "ring all-reduce: 2(n-1) steps of n-th-size chunks to the next rank, one ring per NIC (NCCL Ring)");
CS_REGISTER_POLICY(GradientSync, TunedAllReduce, "sync", "nccl-allreduce",
                   "all-reduce with the algorithm and protocol NCCL's tuner would pick (ring, tree, rhd, nvls)");

} // namespace cs
