// PAT, decentralised policy-aware task placement (the Hit paper's second scheme). Only the abstract is available;
// this is a reconstruction [recon] of policies.md §1: the cost of a transfer is its bytes times the hop length of the
// policy-compliant path (inter-rack flows traverse the middlebox chain), and rack agents improve a placement by local
// moves until none helps.
#include "base/registry.hpp"
#include "policies/mapreduce/data_spread.hpp"
#include "policies/mapreduce/task_scheduler.hpp"

#include <map>

namespace cs {

/** Each round: tasks in FIFO order take the cheapest host with a free container (policy cost; equal costs go to the
 *  rack holding more of the job's data, as in hit.cpp); then every rack's
 *  agent, in rack order, tries for each task placed in its rack a migration to a host with spare containers or a
 *  swap with a task placed elsewhere, applying any move that lowers the summed cost; agents repeat until a full
 *  pass changes nothing (at most 20 passes). */
class PatScheduler : public MapReduceScheduler {
public:
  std::vector<TaskPlacement> schedule(const SchedulingRound& round, const SchedulerContext& ctx) override
  {
    if (round.tasks.empty() || round.offers.empty())
      return {};
    Placement p = greedy_start(round, *ctx.cost);
    for (int pass = 0; pass < 20; ++pass)
      if (!improve(p, round, ctx.cost->layout()))
        break;
    std::vector<TaskPlacement> out;
    for (std::size_t i = 0; i < p.placed.size(); ++i)
      out.push_back({p.placed[i], round.offers[p.host_of[i]].host});
    return out;
  }

private:
  struct Placement {
    std::vector<int> placed;            // task indices, in placement order
    std::vector<int> host_of;           // per placed task: its offer
    std::vector<int> spare;             // per offer: containers left
    std::vector<std::vector<double>> c; // per placed task, per offer: its policy-compliant cost there
  };

  // The oldest tasks first, each on its cheapest host with room (ties: the rack holding more of its job's data).
  static Placement greedy_start(const SchedulingRound& round, const TopologyCost& cost)
  {
    const auto& layout = cost.layout();
    const int n_tasks = static_cast<int>(round.tasks.size()), n_hosts = static_cast<int>(round.offers.size());
    const RoundJobData data = round_job_data(round, cost);
    auto price = [&](int t, int k) {
      const auto& task = round.tasks[t];
      const int h = round.offers[k].host;
      return task.map ? policy_cost(task, h, cost) : data.reduce_spread.at(task.job).policy_cost_at(h);
    };
    Placement p;
    p.spare.resize(n_hosts);
    int capacity = 0;
    for (int k = 0; k < n_hosts; ++k)
      capacity += p.spare[k] = round.offers[k].free;
    for (int t = 0; t < n_tasks && static_cast<int>(p.placed.size()) < capacity; ++t) {
      int best = -1;
      double best_cost = 0, best_affinity = 0;
      const auto& racks = data.rack_bytes.at(round.tasks[t].job);
      for (int k = 0; k < n_hosts; ++k)
        if (p.spare[k] > 0) {
          const double c = price(t, k);
          const double affinity = racks[layout.rack_of[round.offers[k].host]];
          if (best < 0 || c < best_cost || (c == best_cost && affinity > best_affinity)) {
            best = k;
            best_cost = c;
            best_affinity = affinity;
          }
        }
      --p.spare[best];
      p.placed.push_back(t);
      p.host_of.push_back(best);
    }
    p.c.assign(p.placed.size(), std::vector<double>(n_hosts));
    for (std::size_t i = 0; i < p.placed.size(); ++i)
      for (int k = 0; k < n_hosts; ++k)
        p.c[i][k] = price(p.placed[i], k);
    return p;
  }

  // One pass of the rack agents: each task placed in the agent's rack migrates to a host with room, or swaps with a
  // task elsewhere, when that lowers the summed cost. Whether anything moved.
  static bool improve(Placement& p, const SchedulingRound& round, const ClusterLayout& layout)
  {
    const int n = static_cast<int>(p.placed.size()), n_hosts = static_cast<int>(round.offers.size());
    bool improved = false;
    for (int rack = 0; rack < layout.racks(); ++rack)
      for (int i = 0; i < n; ++i) {
        if (layout.rack_of[round.offers[p.host_of[i]].host] != rack)
          continue;
        const int k = p.host_of[i];
        int best_k = -1;
        double best_gain = 1e-9;
        for (int m = 0; m < n_hosts; ++m)
          if (p.spare[m] > 0 && p.c[i][k] - p.c[i][m] > best_gain) {
            best_gain = p.c[i][k] - p.c[i][m];
            best_k = m;
          }
        if (best_k >= 0) {
          ++p.spare[k];
          --p.spare[best_k];
          p.host_of[i] = best_k;
          improved = true;
          continue;
        }
        int best_j = -1;
        for (int j = 0; j < n; ++j) {
          const int m = p.host_of[j];
          const double gain = m == k ? 0.0 : p.c[i][k] + p.c[j][m] - p.c[i][m] - p.c[j][k];
          if (m != k && gain > best_gain) {
            best_gain = gain;
            best_j = j;
          }
        }
        if (best_j >= 0) {
          std::swap(p.host_of[i], p.host_of[best_j]);
          improved = true;
        }
      }
    return improved;
  }
};

CS_REGISTER_POLICY(MapReduceScheduler, PatScheduler, "mapreduce", "pat",
                   "PAT: policy-aware placement (middlebox path cost) improved by per-rack local moves [recon]");

} // namespace cs
