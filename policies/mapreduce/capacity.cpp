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
    Round r{round, *ctx.cost};
    for (std::size_t i = 0; i < round.tasks.size(); ++i) { // jobs in FIFO order with their tasks
      auto [it, fresh] = r.tasks_of.try_emplace(round.tasks[i].job);
      if (fresh)
        r.jobs.push_back(round.tasks[i].job);
      it->second.push_back(static_cast<int>(i));
    }
    r.taken.assign(round.tasks.size(), 0);
    r.queues = round.queues;
    for (int j : r.jobs)
      r.rack_delay[j] = rack_delay(r, j);
    const int hosts = r.cost.layout().hosts();
    r.node_delay = node_locality_delay_ < 0 ? hosts : node_locality_delay_;
    std::vector<TaskPlacement> out;
    for (const auto& offer : round.offers) {
      Heartbeat h{offer.host};
      for (int free = offer.free; free > 0; --free) {
        const int pick = pick_for_heartbeat(r, h);
        if (pick < 0)
          break;
        r.taken[pick] = 1;
        out.push_back({pick, offer.host});
      }
    }
    return out;
  }

private:
  struct Round {
    const SchedulingRound& round;
    const TopologyCost& cost;
    std::vector<int> jobs = {};
    std::map<int, std::vector<int>> tasks_of = {};
    std::map<int, double> rack_delay = {};
    std::vector<char> taken = {};
    std::vector<QueueState> queues = {};
    double node_delay = 0;
  };
  struct Heartbeat {
    int host = 0;
    std::set<int> declined = {}; // jobs that already missed this heartbeat
    bool off_switch_given = false;
  };

  // The further misses before a job accepts any host: the configured delay, or L x C / N (YARN-4189).
  double rack_delay(const Round& r, int j) const
  {
    if (rack_locality_additional_delay_ >= 0)
      return rack_locality_additional_delay_;
    const int hosts = r.cost.layout().hosts();
    std::set<int> locations;
    int pending = 0;
    for (int i : r.tasks_of.at(j))
      if (r.round.tasks[i].map) {
        pending = r.round.tasks[i].pending_maps_of_job;
        for (int h : r.round.tasks[i].data_hosts) {
          locations.insert(h);
          locations.insert(hosts + r.cost.layout().rack_of[h]);
        }
      }
    return static_cast<double>(locations.size()) * pending / hosts;
  }

  // One container of the heartbeat: the queue furthest below its capacity offers it to its jobs in FIFO order.
  int pick_for_heartbeat(Round& r, Heartbeat& h)
  {
    std::vector<int> order(r.queues.size());
    for (std::size_t q = 0; q < order.size(); ++q)
      order[q] = static_cast<int>(q);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return r.queues[a].running / r.queues[a].capacity < r.queues[b].running / r.queues[b].capacity;
    });
    for (int q : order)
      for (int j : r.jobs) {
        if (h.declined.count(j))
          continue;
        const int pick = pick_for_job(r, h, q, j);
        if (pick >= 0) {
          ++r.queues[q].running;
          return pick;
        }
      }
    return -1;
  }

  // Job j's answer to the heartbeat: a reducer (off-switch, one per heartbeat), a node-local map, or after enough
  // missed opportunities a rack-local map, then any map.
  int pick_for_job(Round& r, Heartbeat& h, int q, int j)
  {
    int reduce = -1, node_local = -1, rack_local = -1, any = -1;
    for (int i : r.tasks_of[j]) {
      const auto& t = r.round.tasks[i];
      if (r.taken[i] || t.queue != q)
        continue;
      if (!t.map) {
        if (reduce < 0)
          reduce = i;
        continue;
      }
      const int level = map_locality(t, h.host, r.cost);
      if (level == 0 && node_local < 0)
        node_local = i;
      else if (level == 1 && rack_local < 0)
        rack_local = i;
      else if (any < 0)
        any = i;
    }
    if (reduce >= 0 && !h.off_switch_given) {
      h.off_switch_given = true;
      return reduce;
    }
    if (node_local >= 0) {
      misses_[j] = 0;
      return node_local;
    }
    if (rack_local < 0 && any < 0)
      return -1;
    const long missed = ++misses_[j];
    h.declined.insert(j);
    if (rack_local >= 0 && missed >= r.node_delay)
      return rack_local;
    if (missed >= r.node_delay + r.rack_delay[j] && (rack_local >= 0 || !h.off_switch_given)) {
      h.off_switch_given = h.off_switch_given || rack_local < 0;
      return rack_local >= 0 ? rack_local : any;
    }
    return -1;
  }

  std::map<int, long> misses_; // missed scheduling opportunities per job
  int node_locality_delay_ = 40;
  int rack_locality_additional_delay_ = -1;
};

CS_REGISTER_POLICY(
    MapReduceScheduler, CapacityScheduler, "mapreduce", "capacity",
    "YARN Capacity Scheduler: queue shares, FIFO per queue, delay scheduling for maps, reducers anywhere");

} // namespace cs
