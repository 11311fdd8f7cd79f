// FIFO (Hadoop's original JobQueueTaskScheduler): the oldest job takes every free container, best locality first.
#include "base/registry.hpp"
#include "policies/mapreduce/task_scheduler.hpp"

namespace cs {

/** Each free container goes to the oldest job with pending work: a node-local map, else one of its reducers, else a
 *  rack-local map, else any map. No waiting for locality. */
class FifoMapReduceScheduler : public MapReduceScheduler {
public:
  std::vector<TaskPlacement> schedule(const SchedulingRound& round, const SchedulerContext& ctx) override
  {
    std::vector<TaskPlacement> out;
    std::vector<char> taken(round.tasks.size(), 0);
    for (const auto& offer : round.offers)
      for (int slot = 0; slot < offer.free; ++slot) {
        int pick = -1;
        int head = -1; // first job with an untaken task
        for (std::size_t i = 0; i < round.tasks.size(); ++i)
          if (!taken[i]) {
            head = round.tasks[i].job;
            break;
          }
        if (head < 0)
          return out;
        int best_level = 99;
        for (std::size_t i = 0; i < round.tasks.size(); ++i) {
          const auto& t = round.tasks[i];
          if (taken[i] || t.job != head)
            continue;
          // node-local map 0, reducer 1, rack-local map 2, other map 3
          static constexpr int kMapRank[] = {0, 2, 3, 3}; // by replica level: node, rack, pod, core
          const int level = t.map ? kMapRank[map_locality(t, offer.host, *ctx.cost)] : 1;
          if (level < best_level) {
            best_level = level;
            pick = static_cast<int>(i);
          }
        }
        taken[pick] = 1;
        out.push_back({pick, offer.host});
      }
    return out;
  }
};

CS_REGISTER_POLICY(MapReduceScheduler, FifoMapReduceScheduler, "mapreduce", "fifo",
                   "FIFO: the oldest job takes each free container, node-local map > reducer > rack-local > any");

} // namespace cs
