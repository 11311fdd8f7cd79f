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
    const TopologyCost& cost = *ctx.cost;
    const auto& layout = cost.layout();
    const int n_tasks = static_cast<int>(round.tasks.size());
    const int n_hosts = static_cast<int>(round.offers.size());
    if (n_tasks == 0 || n_hosts == 0)
      return {};
    const RoundJobData data = round_job_data(round, cost);
    const auto& reduce_spread = data.reduce_spread;
    const auto& job_rack_bytes = data.rack_bytes;
    auto price = [&](int t, int k) {
      const auto& task = round.tasks[t];
      const int h = round.offers[k].host;
      return task.map ? policy_cost(task, h, cost) : reduce_spread.at(task.job).policy_cost_at(h);
    };
    std::vector<int> spare(n_hosts);
    int capacity = 0;
    for (int k = 0; k < n_hosts; ++k)
      capacity += spare[k] = round.offers[k].free;
    // Greedy start: the oldest tasks first, each on its cheapest host with room.
    std::vector<int> host_of; // placed task index -> offer index
    std::vector<int> placed;  // task indices, in placement order
    for (int t = 0; t < n_tasks && static_cast<int>(placed.size()) < capacity; ++t) {
      int best = -1;
      double best_cost = 0, best_affinity = 0;
      const auto& racks = job_rack_bytes.at(round.tasks[t].job);
      for (int k = 0; k < n_hosts; ++k)
        if (spare[k] > 0) {
          const double c = price(t, k);
          const double affinity = racks[layout.rack_of[round.offers[k].host]];
          if (best < 0 || c < best_cost || (c == best_cost && affinity > best_affinity)) {
            best = k;
            best_cost = c;
            best_affinity = affinity;
          }
        }
      --spare[best];
      placed.push_back(t);
      host_of.push_back(best);
    }
    const int n = static_cast<int>(placed.size());
    std::vector<std::vector<double>> c(n, std::vector<double>(n_hosts));
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n_hosts; ++k)
        c[i][k] = price(placed[i], k);
    for (int pass = 0; pass < 20; ++pass) {
      bool improved = false;
      for (int rack = 0; rack < layout.racks(); ++rack)
        for (int i = 0; i < n; ++i) {
          if (layout.rack_of[round.offers[host_of[i]].host] != rack)
            continue;
          const int k = host_of[i];
          // Migration to a host with room.
          int best_k = -1;
          double best_gain = 1e-9;
          for (int m = 0; m < n_hosts; ++m)
            if (spare[m] > 0 && c[i][k] - c[i][m] > best_gain) {
              best_gain = c[i][k] - c[i][m];
              best_k = m;
            }
          if (best_k >= 0) {
            ++spare[k];
            --spare[best_k];
            host_of[i] = best_k;
            improved = true;
            continue;
          }
          // Swap with a task on another host.
          int best_j = -1;
          for (int j = 0; j < n; ++j) {
            const int m = host_of[j];
            if (m == k)
              continue;
            const double gain = c[i][k] + c[j][m] - c[i][m] - c[j][k];
            if (gain > best_gain) {
              best_gain = gain;
              best_j = j;
            }
          }
          if (best_j >= 0) {
            std::swap(host_of[i], host_of[best_j]);
            improved = true;
          }
        }
      if (!improved)
        break;
    }
    std::vector<TaskPlacement> out;
    for (int i = 0; i < n; ++i)
      out.push_back({placed[i], round.offers[host_of[i]].host});
    return out;
  }
};

CS_REGISTER_POLICY(MapReduceScheduler, PatScheduler, "mapreduce", "pat",
                   "PAT: policy-aware placement (middlebox path cost) improved by per-rack local moves [recon]");

} // namespace cs
