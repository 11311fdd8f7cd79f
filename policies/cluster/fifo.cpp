// `fifo`: jobs start in arrival order; the head of the queue blocks the others until it fits (no job overtakes).
#include "policies/cluster/cluster_scheduling.hpp"

namespace cs {
namespace {

class FifoJobScheduler : public JobScheduler {
public:
  void configure(ObjectReader&) override {}
  std::vector<std::size_t> schedule(const std::vector<QueuedJob>& queue, ClusterQueueView& view) override
  {
    std::vector<std::size_t> started;
    for (std::size_t i = 0; i < queue.size(); ++i) {
      if ((queue[i].gpu_milli == 1000 && queue[i].gpus > view.free_gpus()) || !view.try_start(queue[i]))
        break;
      started.push_back(i);
    }
    return started;
  }
};

} // namespace

CS_REGISTER_POLICY(JobScheduler, FifoJobScheduler, "cluster", "fifo",
                   "first come, first served: the head of the queue waits until it fits and blocks the rest");

} // namespace cs
