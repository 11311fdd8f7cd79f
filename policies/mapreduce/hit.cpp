// Hit-scheduler (Yang et al., IEEE TCC 2019): task placement as many-to-one stable matching on the hierarchical
// cost of the topology (TAA). Only the paper's abstract is available; the matching as policies.md §1 records it is
// a reconstruction [recon], and so is the tie-break below.
#include "base/registry.hpp"
#include "policies/mapreduce/data_spread.hpp"
#include "policies/mapreduce/task_scheduler.hpp"

#include <algorithm>
#include <map>

namespace cs {

/** Each round, Gale-Shapley deferred acceptance over the pending tasks and the hosts with free containers:
 *  - tasks rank hosts by ascending cost (a map: its split x the level weight of its nearest replica; a reducer: its
 *    estimated partition from every host x the level weights); equal costs go to the host whose rack holds more of
 *    the job's data [recon: keeps a job's tasks together so its shuffle stays low in the tree], then host order;
 *  - hosts rank tasks by the bytes of the task's input they hold (descending), then by cost, then FIFO order;
 *  - a host accepts up to its free containers, and at most one reducer of a job per round [recon: reducers of one
 *    job pull the same partitions at once, so two on one host share its link for the whole shuffle].
 *  Tasks still unmatched wait for the next round. */
class HitScheduler : public MapReduceScheduler {
public:
  std::vector<TaskPlacement> schedule(const SchedulingRound& round, const SchedulerContext& ctx) override
  {
    const TopologyCost& cost = *ctx.cost;
    const auto& layout = cost.layout();
    const int n_tasks = static_cast<int>(round.tasks.size());
    const int n_hosts = static_cast<int>(round.offers.size());
    if (n_tasks == 0 || n_hosts == 0)
      return {};
    const RoundJobData data = round_job_data(round, cost);
    const auto& reduce_spread = data.reduce_spread;
    const auto& job_rack_bytes = data.rack_bytes;
    // cost[t][k] and held[t][k] for task t on offered host k.
    std::vector<std::vector<double>> c(n_tasks, std::vector<double>(n_hosts));
    std::vector<std::vector<double>> held(n_tasks, std::vector<double>(n_hosts));
    std::vector<std::vector<int>> preference(n_tasks);
    for (int t = 0; t < n_tasks; ++t) {
      const auto& task = round.tasks[t];
      const DataSpread* s = task.map ? nullptr : &reduce_spread.at(task.job);
      for (int k = 0; k < n_hosts; ++k) {
        const int h = round.offers[k].host;
        c[t][k] = s ? s->cost_at(h) : placement_cost(task, h, cost);
        held[t][k] =
            s ? s->bytes_at(h)
              : (std::find(task.data_hosts.begin(), task.data_hosts.end(), h) != task.data_hosts.end() ? task.bytes
                                                                                                       : 0);
      }
      auto& pref = preference[t];
      pref.resize(n_hosts);
      for (int k = 0; k < n_hosts; ++k)
        pref[k] = k;
      const auto& racks = job_rack_bytes.at(task.job);
      std::stable_sort(pref.begin(), pref.end(), [&](int a, int b) {
        if (c[t][a] != c[t][b])
          return c[t][a] < c[t][b];
        return racks[layout.rack_of[round.offers[a].host]] > racks[layout.rack_of[round.offers[b].host]];
      });
    }
    // Host k prefers task a to task b.
    auto prefers = [&](int k, int a, int b) {
      if (held[a][k] != held[b][k])
        return held[a][k] > held[b][k];
      if (c[a][k] != c[b][k])
        return c[a][k] < c[b][k];
      return a < b;
    };
    std::vector<std::vector<int>> accepted(n_hosts);
    std::vector<int> next(n_tasks, 0);
    std::vector<int> free_tasks;
    for (int t = n_tasks - 1; t >= 0; --t)
      free_tasks.push_back(t); // FIFO order: the oldest proposes first
    while (!free_tasks.empty()) {
      const int t = free_tasks.back();
      free_tasks.pop_back();
      if (next[t] >= n_hosts)
        continue; // rejected everywhere: waits for the next round
      const int k = preference[t][next[t]++];
      auto& held_by = accepted[k];
      if (!round.tasks[t].map) {
        // A sibling reducer already here: keep the preferred one of the two.
        auto sibling = std::find_if(held_by.begin(), held_by.end(), [&](int o) {
          return !round.tasks[o].map && round.tasks[o].job == round.tasks[t].job;
        });
        if (sibling != held_by.end()) {
          if (prefers(k, t, *sibling)) {
            free_tasks.push_back(*sibling);
            *sibling = t;
          } else {
            free_tasks.push_back(t);
          }
          continue;
        }
      }
      if (static_cast<int>(held_by.size()) < round.offers[k].free) {
        held_by.push_back(t);
        continue;
      }
      // Full: keep the host's favourites, bounce its least preferred.
      auto worst = std::max_element(held_by.begin(), held_by.end(), [&](int a, int b) { return prefers(k, a, b); });
      if (prefers(k, t, *worst)) {
        free_tasks.push_back(*worst);
        *worst = t;
      } else {
        free_tasks.push_back(t);
      }
    }
    std::vector<TaskPlacement> out;
    for (int k = 0; k < n_hosts; ++k)
      for (int t : accepted[k])
        out.push_back({t, round.offers[k].host});
    std::sort(out.begin(), out.end(), [](const TaskPlacement& a, const TaskPlacement& b) { return a.task < b.task; });
    return out;
  }
};

CS_REGISTER_POLICY(MapReduceScheduler, HitScheduler, "mapreduce", "hit",
                   "Hit-scheduler: stable matching of tasks to hosts on the topology's hierarchical cost [recon]");

} // namespace cs
