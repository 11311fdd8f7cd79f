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
    if (round.tasks.empty() || round.offers.empty())
      return {};
    const Costs costs = costs_of(round, *ctx.cost);
    const auto accepted = deferred_acceptance(round, costs);
    std::vector<TaskPlacement> out;
    for (std::size_t k = 0; k < accepted.size(); ++k)
      for (int t : accepted[k])
        out.push_back({t, round.offers[k].host});
    std::sort(out.begin(), out.end(), [](const TaskPlacement& a, const TaskPlacement& b) { return a.task < b.task; });
    return out;
  }

private:
  // cost[t][k] and held[t][k] for task t on offered host k, and each task's hosts from most to least preferred.
  struct Costs {
    std::vector<std::vector<double>> cost, held;
    std::vector<std::vector<int>> preference;
    // Host k prefers task a to task b: the one holding more of its data there, then the cheaper, then the older.
    bool prefers(int k, int a, int b) const
    {
      if (held[a][k] != held[b][k])
        return held[a][k] > held[b][k];
      if (cost[a][k] != cost[b][k])
        return cost[a][k] < cost[b][k];
      return a < b;
    }
  };

  static Costs costs_of(const SchedulingRound& round, const TopologyCost& cost)
  {
    const auto& layout = cost.layout();
    const int n_tasks = static_cast<int>(round.tasks.size()), n_hosts = static_cast<int>(round.offers.size());
    const RoundJobData data = round_job_data(round, cost);
    Costs c;
    c.cost.assign(n_tasks, std::vector<double>(n_hosts));
    c.held.assign(n_tasks, std::vector<double>(n_hosts));
    c.preference.resize(n_tasks);
    for (int t = 0; t < n_tasks; ++t) {
      const auto& task = round.tasks[t];
      const DataSpread* s = task.map ? nullptr : &data.reduce_spread.at(task.job);
      for (int k = 0; k < n_hosts; ++k) {
        const int h = round.offers[k].host;
        c.cost[t][k] = s ? s->cost_at(h) : placement_cost(task, h, cost);
        const bool local = std::find(task.data_hosts.begin(), task.data_hosts.end(), h) != task.data_hosts.end();
        c.held[t][k] = s ? s->bytes_at(h) : (local ? task.bytes : 0);
      }
      auto& pref = c.preference[t];
      pref.resize(n_hosts);
      for (int k = 0; k < n_hosts; ++k)
        pref[k] = k;
      const auto& racks = data.rack_bytes.at(task.job);
      std::stable_sort(pref.begin(), pref.end(), [&](int a, int b) {
        if (c.cost[t][a] != c.cost[t][b])
          return c.cost[t][a] < c.cost[t][b];
        return racks[layout.rack_of[round.offers[a].host]] > racks[layout.rack_of[round.offers[b].host]];
      });
    }
    return c;
  }

  // Gale-Shapley with tasks proposing in FIFO order; a host holds up to its free containers and at most one
  // reducer of a job.
  static std::vector<std::vector<int>> deferred_acceptance(const SchedulingRound& round, const Costs& c)
  {
    const int n_tasks = static_cast<int>(round.tasks.size()), n_hosts = static_cast<int>(round.offers.size());
    std::vector<std::vector<int>> accepted(n_hosts);
    std::vector<int> next(n_tasks, 0);
    std::vector<int> free_tasks;
    for (int t = n_tasks - 1; t >= 0; --t)
      free_tasks.push_back(t); // FIFO order: the oldest proposes first
    // `incumbent` keeps the host's preferred one of itself and t; the other proposes on.
    auto contest = [&](int k, int& incumbent, int t) {
      if (c.prefers(k, t, incumbent)) {
        free_tasks.push_back(incumbent);
        incumbent = t;
      } else {
        free_tasks.push_back(t);
      }
    };
    while (!free_tasks.empty()) {
      const int t = free_tasks.back();
      free_tasks.pop_back();
      if (next[t] >= n_hosts)
        continue; // rejected everywhere: waits for the next round
      const int k = c.preference[t][next[t]++];
      auto& held_by = accepted[k];
      if (!round.tasks[t].map) {
        auto sibling = std::find_if(held_by.begin(), held_by.end(), [&](int o) {
          return !round.tasks[o].map && round.tasks[o].job == round.tasks[t].job;
        });
        if (sibling != held_by.end()) {
          contest(k, *sibling, t);
          continue;
        }
      }
      if (static_cast<int>(held_by.size()) < round.offers[k].free) {
        held_by.push_back(t);
        continue;
      }
      // Full: keep the host's favourites, bounce its least preferred.
      auto worst = std::max_element(held_by.begin(), held_by.end(), [&](int a, int b) { return c.prefers(k, a, b); });
      contest(k, *worst, t);
    }
    return accepted;
  }
};

CS_REGISTER_POLICY(MapReduceScheduler, HitScheduler, "mapreduce", "hit",
                   "Hit-scheduler: stable matching of tasks to hosts on the topology's hierarchical cost [recon]");

} // namespace cs
