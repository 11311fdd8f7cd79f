// YARN Capacity Scheduler (the Hit paper's baseline): queues with guaranteed shares, FIFO inside a queue, delay
// scheduling for maps, reducers without locality.
#include "base/registry.hpp"
#include "policies/mapreduce/task_scheduler.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace cs {

/** Per heartbeat of host h: the queue furthest below its capacity offers h to its jobs in FIFO order. A job's
 *  reducers (higher priority than maps in the MapReduce AM) take it at once. A map takes it node-local; a job with no
 *  node-local map on h misses the opportunity, and after node-locality-delay misses accepts rack-local, after a
 *  further rack-locality-additional-delay misses anything (-1: L x C / N per YARN-4189, L its requested locations,
 *  C its pending maps, N the hosts). A node-local assignment resets the count. A job that declines passes h to the
 *  next job. One heartbeat takes at most one off-switch container (YARN's
 *  per-node-heartbeat.maximum-offswitch-assignments, default 1); reducers ask for no locality, so they are off-switch.
 */
class CapacityScheduler : public MapReduceScheduler {
public:
  void configure(ObjectReader& r) override
  {
    r.field("node_locality_delay", node_locality_delay_,
            "missed scheduling opportunities before a job accepts rack-local (-1 = number of hosts)")
        .field("rack_locality_additional_delay", rack_locality_additional_delay_,
               "further misses before it accepts any host (-1 = L*C/N per job)");
    r.require(node_locality_delay_ >= -1, "node_locality_delay", "node_locality_delay must be -1 or more");
    r.require(rack_locality_additional_delay_ >= -1, "rack_locality_additional_delay",
              "rack_locality_additional_delay must be -1 or more");
  }

  std::vector<TaskPlacement> schedule(const SchedulingRound& round, const SchedulerContext& ctx) override
  {
    const TopologyCost& cost = *ctx.cost;
    const int hosts = cost.layout().hosts();
    std::vector<TaskPlacement> out;
    std::vector<char> taken(round.tasks.size(), 0);
    std::vector<QueueState> queues = round.queues;
    // Jobs in FIFO order with their tasks, and each job's rack-delay threshold.
    std::vector<int> jobs;
    std::map<int, std::vector<int>> tasks_of;
    std::map<int, double> rack_delay;
    for (std::size_t i = 0; i < round.tasks.size(); ++i) {
      auto [it, fresh] = tasks_of.try_emplace(round.tasks[i].job);
      if (fresh)
        jobs.push_back(round.tasks[i].job);
      it->second.push_back(static_cast<int>(i));
    }
    for (int j : jobs) {
      if (rack_locality_additional_delay_ >= 0) {
        rack_delay[j] = rack_locality_additional_delay_;
        continue;
      }
      std::set<int> locations;
      int pending = 0;
      for (int i : tasks_of[j])
        if (round.tasks[i].map) {
          pending = round.tasks[i].pending_maps_of_job;
          for (int h : round.tasks[i].data_hosts) {
            locations.insert(h);
            locations.insert(hosts + cost.layout().rack_of[h]);
          }
        }
      rack_delay[j] = static_cast<double>(locations.size()) * pending / hosts;
    }
    const double node_delay = node_locality_delay_ < 0 ? hosts : node_locality_delay_;
    for (const auto& offer : round.offers) {
      int free = offer.free;
      std::set<int> declined; // jobs that already missed this heartbeat
      bool off_switch_given = false;
      while (free > 0) {
        // Queues by used share of their capacity, lowest first (ties: queue order).
        std::vector<int> order(queues.size());
        for (std::size_t q = 0; q < order.size(); ++q)
          order[q] = static_cast<int>(q);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
          return queues[a].running / queues[a].capacity < queues[b].running / queues[b].capacity;
        });
        int pick = -1;
        for (int q : order) {
          for (int j : jobs) {
            if (declined.count(j))
              continue;
            int reduce = -1, node_local = -1, rack_local = -1, any = -1;
            for (int i : tasks_of[j]) {
              const auto& t = round.tasks[i];
              if (taken[i] || t.queue != q)
                continue;
              if (!t.map) {
                if (reduce < 0)
                  reduce = i;
                continue;
              }
              int level = map_locality(t, offer.host, cost);
              if (level == 0 && node_local < 0)
                node_local = i;
              else if (level == 1 && rack_local < 0)
                rack_local = i;
              else if (any < 0)
                any = i;
            }
            if (reduce >= 0 && !off_switch_given) {
              pick = reduce;
              off_switch_given = true;
            } else if (node_local >= 0) {
              pick = node_local;
              misses_[j] = 0;
            } else if (rack_local >= 0 || any >= 0) {
              const long missed = ++misses_[j];
              declined.insert(j);
              if (rack_local >= 0 && missed >= node_delay)
                pick = rack_local;
              else if (missed >= node_delay + rack_delay[j] && (rack_local >= 0 || !off_switch_given)) {
                pick = rack_local >= 0 ? rack_local : any;
                off_switch_given = off_switch_given || rack_local < 0;
              }
            }
            if (pick >= 0)
              break;
          }
          if (pick >= 0) {
            ++queues[q].running;
            break;
          }
        }
        if (pick < 0)
          break;
        taken[pick] = 1;
        out.push_back({pick, offer.host});
        --free;
      }
    }
    return out;
  }

private:
  std::map<int, long> misses_; // missed scheduling opportunities per job
  int node_locality_delay_ = 40;
  int rack_locality_additional_delay_ = -1;
};

CS_REGISTER_POLICY(
    MapReduceScheduler, CapacityScheduler, "mapreduce", "capacity",
    "YARN Capacity Scheduler: queue shares, FIFO per queue, delay scheduling for maps, reducers anywhere");

} // namespace cs
