// Gradient all-reduce with NCCL's ring algorithm, and with whatever algorithm NCCL's tuner would pick.
#include "base/registry.hpp"
#include "policies/sync/gradient_sync.hpp"

namespace cs {

std::vector<int> add_sync_collective(TaskGraph& graph, const SyncRequest& r, const std::string& kind,
                                     const std::string& algorithm)
{
  CollectiveSpec spec;
  spec.kind = kind;
  spec.algorithm = algorithm;
  spec.bytes = r.bytes;
  spec.hosts = r.hosts;
  spec.labels = r.labels;
  spec.copies = r.copies;
  return graph.add_collective(spec, r.streams, r.ready);
}

std::vector<int> GradientSync::gather(TaskGraph& graph, const SyncRequest& r) const
{
  return add_sync_collective(graph, r, "all-gather", "auto");
}

/** The bandwidth-optimal ring (Patarasuk & Yuan 2009; NCCL's Ring): 2(n-1) steps in which every member sends an
 *  n-th of the bucket to its successor, over as many rings (channels) as a node has NICs when the group spans
 *  nodes; the protocol (ll or simple) is the tuner's. Reduction arithmetic is not charged (NCCL overlaps it). ZeRO's
 *  reduce-scatter and all-gather take the tuner's algorithm. */
class RingAllReduce : public GradientSync {
public:
  std::vector<int> reduce(TaskGraph& graph, const SyncRequest& r, bool sharded) const override
  {
    return sharded ? add_sync_collective(graph, r, "reduce-scatter", "auto")
                   : add_sync_collective(graph, r, "all-reduce", "ring");
  }
};

/** NCCL-like: the algorithm (ring, tree, rhd, nvls) and protocol the closed forms rank fastest for each bucket. */
class TunedAllReduce : public GradientSync {
public:
  std::vector<int> reduce(TaskGraph& graph, const SyncRequest& r, bool sharded) const override
  {
    return add_sync_collective(graph, r, sharded ? "reduce-scatter" : "all-reduce", "auto");
  }
};

CS_REGISTER_POLICY(GradientSync, RingAllReduce, "sync", "ring-allreduce",
                   "ring all-reduce: 2(n-1) steps of n-th-size chunks to the next rank, one ring per NIC (NCCL Ring)");
CS_REGISTER_POLICY(GradientSync, TunedAllReduce, "sync", "nccl-allreduce",
                   "all-reduce with the algorithm and protocol NCCL's tuner would pick (ring, tree, rhd, nvls)");

} // namespace cs
