// Gradient synchronisation policies: how a data-parallel group combines one gradient bucket, and (ZeRO) how it
// shares updated parameter shards. Policies emit collectives as tasks; the backend's lowering prices them.
#pragma once

#include "base/registry.hpp"
#include "core/task_graph.hpp"

#include <string>
#include <vector>

namespace cs {

/** One bucket (or one parameter shard set) over a data-parallel group. */
struct SyncRequest {
  std::vector<int> hosts;   // group members, in ring order
  std::vector<int> streams; // per member: its communication stream, or -1 for a member that is not simulated
  std::vector<int> ready;   // per member: the task after which its data is ready (-1 = none)
  double bytes = 0;         // bucket size on every member (nccl-tests' size)
  TaskLabels labels;
  double copies = 1; // identical groups beside it that the graph leaves out (CollectiveSpec::copies)
};

class GradientSync : public Configurable {
public:
  /** One bucket's reduction: an all-reduce, or with `sharded` (ZeRO-1/2/3) a reduce-scatter after which each member
   *  holds the reduced 1/n it updates. Returns per member the task its consumers wait for (-1 where not simulated). */
  virtual std::vector<int> reduce(TaskGraph& graph, const SyncRequest& request, bool sharded) const = 0;
  /** ZeRO: the all-gather of updated shards after the step (ZeRO-1/2), or of a layer's parameters before a pass
   *  (ZeRO-3). The default uses the tuner's algorithm. */
  virtual std::vector<int> gather(TaskGraph& graph, const SyncRequest& request) const;
};

/** A collective of `kind` with `algorithm` over the request's group, as COLLECTIVE tasks. */
std::vector<int> add_sync_collective(TaskGraph& graph, const SyncRequest& request, const std::string& kind,
                                     const std::string& algorithm);

} // namespace cs
