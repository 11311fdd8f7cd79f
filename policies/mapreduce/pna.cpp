// PNA, probabilistic network-aware task placement (IEEE CLUSTER 2016), as policies.md §1 records it. The launch
// probability's form p = C_min / C is the suggested reconstruction [recon]; here costs are shifted by one unit of
// rack-level traffic, p = (1 + C_min) / (1 + C), so that a zero-cost local placement does not forbid every other one.
#include "base/registry.hpp"
#include "policies/mapreduce/data_spread.hpp"
#include "policies/mapreduce/task_scheduler.hpp"

#include <map>

namespace cs {

/** When a container frees on host n: among the pending maps and reducers pick t* = argmin C(t, n) (per byte, in
 *  units of rack-level cost; reducers priced on their estimated partitions), launch it with probability
 *  (1 + C_min(t*)) / (1 + C(t*, n)), C_min being t*'s cost at its best host; otherwise leave n's slots for this
 *  heartbeat. */
class PnaScheduler : public MapReduceScheduler {
public:
  std::vector<TaskPlacement> schedule(const SchedulingRound& round, const SchedulerContext& ctx) override
  {
    const TopologyCost& cost = *ctx.cost;
    const double unit = cost.level_costs()[1] > 0 ? cost.level_costs()[1] : 1.0;
    std::vector<TaskPlacement> out;
    std::vector<char> taken(round.tasks.size(), 0);
    // Reducers of one job share their data spread; price it once per job.
    std::map<int, DataSpread> spreads;
    std::map<int, double> best_reduce_cost;
    for (const auto& t : round.tasks)
      if (!t.map && !spreads.count(t.job)) {
        auto& s = spreads.emplace(t.job, DataSpread(t, cost)).first->second;
        double best = -1;
        for (int h : t.data_hosts)
          if (double c = s.cost_at(h); best < 0 || c < best)
            best = c;
        best_reduce_cost[t.job] = best < 0 ? 0 : best;
      }
    auto per_byte = [&](const CandidateTask& t, double c) { return t.bytes > 0 ? c / t.bytes / unit : 0.0; };
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (const auto& offer : round.offers)
      for (int slot = 0; slot < offer.free; ++slot) {
        int pick = -1;
        double pick_cost = 0, pick_min = 0;
        for (std::size_t i = 0; i < round.tasks.size(); ++i) {
          if (taken[i])
            continue;
          const auto& t = round.tasks[i];
          double c, c_min;
          if (t.map) {
            c = per_byte(t, placement_cost(t, offer.host, cost));
            c_min = per_byte(t, t.bytes * cost.level_costs()[0]);
          } else {
            const auto& s = spreads.at(t.job);
            c = per_byte(t, s.cost_at(offer.host));
            c_min = per_byte(t, best_reduce_cost.at(t.job));
          }
          if (pick < 0 || c < pick_cost) {
            pick = static_cast<int>(i);
            pick_cost = c;
            pick_min = c_min;
          }
        }
        if (pick < 0)
          return out;
        const double p = (1.0 + pick_min) / (1.0 + pick_cost);
        if (u(*ctx.rng) >= p)
          break; // skip this host until its next heartbeat
        taken[pick] = 1;
        out.push_back({pick, offer.host});
      }
    return out;
  }
};

CS_REGISTER_POLICY(MapReduceScheduler, PnaScheduler, "mapreduce", "pna",
                   "PNA: cheapest task for the freed slot, launched with probability falling with its cost [recon]");

} // namespace cs
