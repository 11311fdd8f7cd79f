#include "workloads/mapreduce/mapreduce_metrics.hpp"

#include <algorithm>
#include <cmath>

namespace cs {

RunMetrics mapreduce_metrics(const MapReduceOutcome& o, const TopologyCost& cost)
{
  RunMetrics r;
  auto& B = r.breakdown;
  std::vector<double> jct;
  double sum = 0;
  for (const auto& j : o.jobs) {
    jct.push_back(j.finish - j.submit);
    sum += j.finish - j.submit;
  }
  r.set(metric::jobs, static_cast<double>(o.jobs.size()));
  r.set(metric::mean_jct_s, jct.empty() ? 0 : sum / jct.size());
  r.set(metric::p50_jct_s, percentile(jct, 0.5));
  r.set(metric::p95_jct_s, percentile(jct, 0.95));
  r.set(metric::makespan_s, o.makespan);
  double traffic_cost = 0, communication_cost = 0, network = 0;
  double by_level[4] = {0, 0, 0, 0};
  double by_kind[3] = {0, 0, 0};
  double shuffle_flow_s = 0;
  long shuffle_flows = 0;
  for (const auto& t : o.transfers) {
    const int level = cost.level(t.src, t.dst);
    by_level[level] += t.bytes;
    by_kind[static_cast<int>(t.kind)] += t.bytes;
    if (t.src != t.dst)
      network += t.bytes;
    if (t.kind != TransferKind::OUTPUT) {
      traffic_cost += t.bytes * cost.level_costs()[level];
      communication_cost += t.bytes * cost.policy_hops(t.src, t.dst);
    }
    if (t.kind == TransferKind::SHUFFLE && t.src != t.dst) {
      shuffle_flow_s += t.end - t.start;
      shuffle_flows += t.segments;
    }
  }
  r.set(metric::traffic_cost, traffic_cost);
  r.set(metric::communication_cost, communication_cost);
  r.set(metric::network_bytes, network);
  r.set(metric::bytes_host, by_level[0]);
  r.set(metric::bytes_rack, by_level[1]);
  r.set(metric::bytes_pod, by_level[2]);
  r.set(metric::bytes_core, by_level[3]);
  r.set(metric::mean_shuffle_flow_s, shuffle_flows ? shuffle_flow_s / shuffle_flows : 0);
  long first_attempts = 0, locality[3] = {0, 0, 0}, speculative = 0, killed = 0, failed = 0;
  double busy = 0;
  for (const auto& t : o.tasks) {
    busy += t.end - t.start;
    speculative += t.speculative;
    killed += t.killed;
    failed += t.failed;
    if (t.map && !t.speculative) {
      ++first_attempts;
      ++locality[std::min(t.locality, 2)];
    }
  }
  r.set(metric::map_locality_node, first_attempts ? static_cast<double>(locality[0]) / first_attempts : 0);
  r.set(metric::map_locality_rack, first_attempts ? static_cast<double>(locality[1]) / first_attempts : 0);
  r.set(metric::map_locality_off_rack, first_attempts ? static_cast<double>(locality[2]) / first_attempts : 0);
  r.set(metric::utilization, o.makespan > 0 ? busy / (o.containers * o.makespan) : 0);
  B["map_read_bytes"] = by_kind[0];
  B["shuffle_bytes"] = by_kind[1];
  B["output_bytes"] = by_kind[2];
  B["shuffle_segments"] = static_cast<double>(shuffle_flows);
  B["task_attempts"] = static_cast<double>(o.tasks.size());
  B["speculative_attempts"] = static_cast<double>(speculative);
  B["killed_attempts"] = static_cast<double>(killed);
  B["failed_attempts"] = static_cast<double>(failed);
  B["failed_jobs"] =
      static_cast<double>(std::count_if(o.jobs.begin(), o.jobs.end(), [](const auto& j) { return j.failed; }));
  B["scheduling_rounds"] = static_cast<double>(o.rounds);
  B["activities"] = static_cast<double>(o.activities);
  B["containers"] = o.containers;
  return r;
}

} // namespace cs
