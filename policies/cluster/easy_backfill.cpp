// `backfill`: EASY backfilling (Lifka, 1995; Mu'alem and Feitelson, 2001): jobs start in arrival order; when the head
// does not fit it gets a reservation at the earliest time enough GPUs will be free (from running jobs' expected ends),
// and later jobs may start now if they fit and either end before that time or use only GPUs the head will not need.
#include "policies/cluster/cluster_scheduling.hpp"

namespace cs {
namespace {

class EasyBackfillScheduler : public JobScheduler {
public:
  void configure(ObjectReader&) override {}
  std::vector<std::size_t> schedule(const std::vector<QueuedJob>& queue, ClusterQueueView& view) override
  {
    std::vector<std::size_t> started;
    std::size_t head = 0;
    while (head < queue.size() && !(queue[head].gpu_milli == 1000 && queue[head].gpus > view.free_gpus()) &&
           view.try_start(queue[head]))
      started.push_back(head++);
    if (head >= queue.size())
      return started;
    // The head's reservation: the shadow time when enough GPUs are free, and the extra GPUs free then beyond its need.
    int free = view.free_gpus();
    double shadow = view.now();
    for (const auto& r : view.running()) {
      if (free >= queue[head].gpus)
        break;
      free += r.gpu_milli == 1000 ? r.gpus : 0;
      shadow = r.end_s;
    }
    int extra = free - queue[head].gpus;
    for (std::size_t i = head + 1; i < queue.size(); ++i) {
      const QueuedJob& j = queue[i];
      const bool ends_before = view.now() + j.duration_s <= shadow;
      if ((!ends_before && j.gpus > extra) || (j.gpu_milli == 1000 && j.gpus > view.free_gpus()))
        continue;
      if (view.try_start(j)) {
        started.push_back(i);
        if (!ends_before)
          extra -= j.gpus;
      }
    }
    return started;
  }
};

} // namespace

CS_REGISTER_POLICY(JobScheduler, EasyBackfillScheduler, "cluster", "backfill",
                   "EASY backfilling: arrival order, and later jobs jump ahead when they do not delay the head");

} // namespace cs
