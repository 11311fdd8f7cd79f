#include "workloads/training/moe_metrics.hpp"

#include "base/statistics.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace cs {

std::map<int, Intervals> alltoall_spans(const TaskGraph& g, const Timeline& tl, int host)
{
  using Key = std::tuple<int, int, int, int, int, int>; // host, iteration, stage, microbatch, layer, phase
  std::map<Key, std::pair<double, double>> spans;
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Task& t = g.task(static_cast<int>(id));
    if (t.labels.comm != CommKind::EXPERT_ALLTOALL || t.kind == TaskKind::COMPUTE || (host >= 0 && t.host != host))
      continue;
    const auto& l = t.labels;
    auto [it, fresh] =
        spans.try_emplace(Key{t.host, l.iteration, l.stage, l.microbatch, l.layer, l.phase}, tl.start[id], tl.end[id]);
    if (!fresh)
      it->second = {std::min(it->second.first, tl.start[id]), std::max(it->second.second, tl.end[id])};
  }
  std::map<int, Intervals> out;
  for (const auto& [key, span] : spans)
    out[std::get<0>(key)].push_back(span);
  return out;
}

void add_moe_metrics(RunMetrics& m, const TrainingGraph& tr, const Timeline& tl)
{
  const TaskGraph& g = tr.graph;
  const MoeStats& s = tr.moe;
  const int iterations = std::max<int>(1, static_cast<int>(tr.optimizer_tasks.size()));
  std::map<int, Intervals> compute;
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Task& t = g.task(static_cast<int>(id));
    if (t.kind == TaskKind::COMPUTE && tl.end[id] > tl.start[id])
      compute[t.host].emplace_back(tl.start[id], tl.end[id]);
  }
  auto a2a = alltoall_spans(g, tl);
  double longest = 0, exposed = 0;
  for (auto& [host, intervals] : a2a) {
    const Intervals merged = union_of(intervals);
    const double total = length(merged);
    if (total > longest) {
      longest = total;
      exposed = total - overlap(merged, union_of(compute[host]));
    }
  }
  m.set(metric::alltoall_time_s, longest / iterations);
  m.set(metric::alltoall_exposed_fraction, longest > 0 ? exposed / longest : 0.0);
  m.set(metric::expert_load_imbalance, s.steps > 0 ? s.imbalance_sum / s.steps : 1.0);
  m.set(metric::expert_load_imbalance_max, s.imbalance_max);
  m.set(metric::tokens_dropped, s.dropped / iterations);
  m.set(metric::tokens_dropped_fraction, s.routed > 0 ? s.dropped / s.routed : 0.0);
  m.set(metric::expert_placement_changes, s.placement_changes);
  m.set(metric::expert_moved_bytes, s.moved_bytes / iterations);
  m.set(metric::moe_partitions, s.steps > 0 ? s.partitions_sum / s.steps : 1.0);
  for (const auto& [layer, sum] : s.layer_imbalance)
    m.breakdown["expert_load_imbalance_layer" + std::to_string(layer)] = sum.first / sum.second;
}

} // namespace cs
