// `sjf`: shortest job first with perfect knowledge of run times (the recorded duration), as trace-driven studies
// such as Tiresias use it for a bound: every scheduling point starts, shortest first, every job that fits.
#include "policies/cluster/cluster_scheduling.hpp"

#include <algorithm>
#include <numeric>

namespace cs {
namespace {

class SjfScheduler : public JobScheduler {
public:
  void configure(ObjectReader&) override {}
  std::vector<std::size_t> schedule(const std::vector<QueuedJob>& queue, ClusterQueueView& view) override
  {
    std::vector<std::size_t> order(queue.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return queue[a].duration_s < queue[b].duration_s; });
    std::vector<std::size_t> started;
    for (std::size_t i : order) {
      if (queue[i].gpu_milli == 1000 && queue[i].gpus > view.free_gpus())
        continue; // cannot fit: skip the placement search
      if (view.try_start(queue[i]))
        started.push_back(i);
    }
    return started;
  }
};

} // namespace

CS_REGISTER_POLICY(JobScheduler, SjfScheduler, "cluster", "sjf",
                   "shortest job first (recorded durations known): starts every job that fits, shortest first");

} // namespace cs
