// Gradient synchronisation policies: how a data-parallel group combines one gradient bucket.
#pragma once

#include "base/registry.hpp"

#include "models/collectives/collective.hpp"

#include <string>
#include <vector>

namespace cs {

/** One bucket to synchronise over a data-parallel group. */
struct SyncRequest {
  std::vector<int> hosts; // group members, in ring order
  std::vector<int> ready; // per member: the task after which its bucket is ready (-1 = none)
  double bytes = 0;       // bucket size on every member
  TaskLabels labels;
};

/** Emits the tasks of one synchronisation into a task graph. */
class GradientSync : public Configurable {
public:
  virtual ~GradientSync() = default;
  /** Adds the tasks; returns per member the tasks that must end before that member may use the result. */
  virtual std::vector<std::vector<int>> synchronize(TaskGraph& graph, StreamPool& streams, const PlatformSpec& platform,
                                                    const SyncRequest& request) const = 0;
};

} // namespace cs
