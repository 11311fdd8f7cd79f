#include "workloads/training/moe_metrics.hpp"

#include "base/statistics.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace cs {

void add_moe_metrics(RunMetrics& m, const TrainingGraph& tr, const Timeline& tl)
{
  const TaskGraph& g = tr.graph;
  const MoeStats& s = tr.moe;
  const int iterations = std::max<int>(1, static_cast<int>(tr.optimizer_tasks.size()));
  // Per host, per all-to-all (its labels): from its first task's start to its last task's end.
  using Key = std::tuple<int, int, int, int, int, int>; // host, iteration, stage, microbatch, layer, phase
  std::map<Key, std::pair<double, double>> spans;
  std::map<int, Intervals> compute;
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Task& t = g.task(static_cast<int>(id));
    if (t.kind == TaskKind::COMPUTE && tl.end[id] > tl.start[id])
      compute[t.host].emplace_back(tl.start[id], tl.end[id]);
    if (t.labels.comm != CommKind::EXPERT_ALLTOALL || t.kind == TaskKind::COMPUTE)
      continue;
    const auto& l = t.labels;
    const Key key{t.host, l.iteration, l.stage, l.microbatch, l.layer, l.phase};
    auto it = spans.find(key);
    if (it == spans.end())
      spans[key] = {tl.start[id], tl.end[id]};
    else
      it->second = {std::min(it->second.first, tl.start[id]), std::max(it->second.second, tl.end[id])};
  }
  std::map<int, Intervals> a2a;
  for (const auto& [key, span] : spans)
    a2a[std::get<0>(key)].push_back(span);
  double longest = 0, exposed = 0;
  for (auto& [host, intervals] : a2a) {
    const Intervals merged = union_of(intervals);
    const double total = length(merged);
    if (total > longest) {
      longest = total;
      exposed = total - overlap(merged, union_of(compute[host]));
    }
  }
  m.metrics["alltoall_time_s"] = longest / iterations;
  m.metrics["alltoall_exposed_fraction"] = longest > 0 ? exposed / longest : 0.0;
  m.metrics["expert_load_imbalance"] = s.steps > 0 ? s.imbalance_sum / s.steps : 1.0;
  m.metrics["expert_load_imbalance_max"] = s.imbalance_max;
  m.metrics["tokens_dropped"] = s.dropped / iterations;
  m.metrics["tokens_dropped_fraction"] = s.routed > 0 ? s.dropped / s.routed : 0.0;
  m.metrics["expert_placement_changes"] = s.placement_changes;
  m.metrics["expert_moved_bytes"] = s.moved_bytes / iterations;
  m.metrics["moe_partitions"] = s.steps > 0 ? s.partitions_sum / s.steps : 1.0;
  for (const auto& [layer, sum] : s.layer_imbalance)
    m.breakdown["expert_load_imbalance_layer" + std::to_string(layer)] = sum.first / sum.second;
}

} // namespace cs
