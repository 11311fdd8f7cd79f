#include "workloads/training/training_metrics.hpp"

#include <algorithm>

namespace cs {

RunMetrics training_metrics(const TrainingGraph& tr, const Timeline& tl, const PlatformSpec& platform)
{
  const TaskGraph& g = tr.graph;
  const int iterations = static_cast<int>(tr.optimizer_tasks.size());
  std::vector<double> iteration_end;
  for (const auto& opts : tr.optimizer_tasks) {
    double end = 0;
    for (int t : opts)
      end = std::max(end, tl.end[t]);
    iteration_end.push_back(end);
  }
  double iteration_time =
      iterations > 1 ? (iteration_end.back() - iteration_end.front()) / (iterations - 1) : iteration_end.front();

  double intra = 0, inter = 0;
  // Per (iteration, bucket): the span from the first transfer's start to the last one's end.
  std::map<std::pair<int, int>, std::pair<double, double>> sync_span;
  std::vector<double> compute_busy(tr.ranks, 0.0), comm_busy(tr.ranks, 0.0), tp_busy(tr.ranks, 0.0);
  std::map<std::string, double> phase_time; // compute seconds by phase, all ranks
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Task& t = g.task(static_cast<int>(id));
    double d = tl.end[id] - tl.start[id];
    if (t.kind == TaskKind::TRANSFER) {
      if (t.host == t.dst)
        continue;
      const auto& topo = platform.topology;
      bool same_machine = topo.vertex(topo.hosts()[t.host]).machine == topo.vertex(topo.hosts()[t.dst]).machine;
      (same_machine ? intra : inter) += t.bytes;
      if (g.streams()[t.stream].name.rfind("tp", 0) == 0) { // tensor-parallel all-reduces: on the critical path
        tp_busy[t.host] += d;
        continue;
      }
      comm_busy[t.host] += d;
      if (g.names()[t.labels.phase] != "gradient-sync")
        continue; // pipeline activations
      auto key = std::make_pair(t.labels.iteration, t.labels.layer);
      auto [it, fresh] = sync_span.emplace(key, std::make_pair(tl.start[id], tl.end[id]));
      if (!fresh) {
        it->second.first = std::min(it->second.first, tl.start[id]);
        it->second.second = std::max(it->second.second, tl.end[id]);
      }
    } else if (t.kind == TaskKind::COMPUTE) {
      compute_busy[t.host] += d;
      phase_time[g.names()[t.labels.phase]] += d;
    }
  }
  int busiest = static_cast<int>(std::max_element(compute_busy.begin(), compute_busy.end()) - compute_busy.begin());
  const double compute = compute_busy[busiest] / iterations;
  // Communication time: the union of the intervals during which some gradient bucket is being synchronised.
  std::vector<std::pair<double, double>> spans;
  for (const auto& [key, span] : sync_span)
    spans.push_back(span);
  std::sort(spans.begin(), spans.end());
  double comm_union = 0, cover_end = -1;
  for (const auto& [a, b] : spans) {
    double from = std::max(a, cover_end);
    if (b > from)
      comm_union += b - from;
    cover_end = std::max(cover_end, b);
  }
  const double comm = comm_union / iterations;
  const double exposed = std::max(0.0, iteration_time - compute);

  RunMetrics m;
  m.metrics["iteration_time_s"] = iteration_time;
  m.metrics["throughput_samples_per_s"] = tr.samples_per_iteration / iteration_time;
  m.metrics["tokens_per_s"] = tr.tokens_per_iteration / iteration_time;
  m.metrics["makespan_s"] = tl.makespan;
  // Every GPU's traffic: the graph holds TP rank 0 of each group (the others move the same bytes on their own links),
  // and the TP collectives themselves, folded into the passes, stay inside the node.
  intra = intra * tr.tensor_parallel + tr.tp_bytes_per_iteration * iterations;
  inter *= tr.tensor_parallel;
  m.metrics["network_bytes"] = (intra + inter) / iterations;
  m.metrics["network_bytes_intra_node"] = intra / iterations;
  m.metrics["network_bytes_inter_node"] = inter / iterations;
  m.metrics["tflops_per_gpu"] = tr.model_flops_per_iteration / tr.ranks / iteration_time / 1e12;
  m.metrics["parameter_count"] = tr.parameters;
  m.metrics["gradient_bucket_count"] = tr.buckets;
  m.metrics["task_count"] = static_cast<double>(g.size());
  m.breakdown["compute_s"] = compute;
  m.breakdown["communication_s"] = comm;
  m.breakdown["link_busy_busiest_rank_s"] = comm_busy[busiest] / iterations;
  if (tr.tensor_parallel > 1)
    m.breakdown["tp_communication_s"] = tr.tp_seconds_per_iteration;
  m.breakdown["exposed_communication_s"] = exposed;
  m.breakdown["overlap_fraction"] = comm > 0 ? std::clamp(1.0 - exposed / comm, 0.0, 1.0) : 1.0;
  for (const auto& [phase, seconds] : phase_time)
    m.breakdown["compute_" + phase + "_s"] = seconds / tr.compute_streams.size() / iterations;
  // Communication by kind on the busiest rank: the time some transfer of that kind it sends is moving (a union of
  // intervals), and the share of that time its compute also runs (hidden behind compute).
  auto union_of = [](std::vector<std::pair<double, double>> v) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<double, double>> out;
    for (const auto& iv : v)
      if (!out.empty() && iv.first <= out.back().second)
        out.back().second = std::max(out.back().second, iv.second);
      else
        out.push_back(iv);
    return out;
  };
  std::vector<std::pair<double, double>> compute_on_busiest;
  std::map<std::string, std::vector<std::pair<double, double>>> sent_by_kind;
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Task& t = g.task(static_cast<int>(id));
    if (t.host != busiest || tl.end[id] <= tl.start[id])
      continue;
    if (t.kind == TaskKind::COMPUTE) {
      compute_on_busiest.emplace_back(tl.start[id], tl.end[id]);
    } else if (t.kind == TaskKind::TRANSFER && t.dst != t.host) {
      std::string kind = g.streams()[t.stream].name.rfind("tp", 0) == 0 ? "tp" : g.names()[t.labels.phase];
      std::replace(kind.begin(), kind.end(), '-', '_');
      sent_by_kind[kind].emplace_back(tl.start[id], tl.end[id]);
    }
  }
  const auto busy = union_of(compute_on_busiest);
  for (const auto& [kind, intervals] : sent_by_kind) {
    double total = 0, hidden = 0;
    std::size_t j = 0;
    for (const auto& [a, b] : union_of(intervals)) {
      total += b - a;
      while (j < busy.size() && busy[j].second <= a)
        ++j;
      for (std::size_t k = j; k < busy.size() && busy[k].first < b; ++k)
        hidden += std::min(b, busy[k].second) - std::max(a, busy[k].first);
    }
    m.breakdown["communication_" + kind + "_s"] = total / iterations;
    m.breakdown["hidden_" + kind + "_fraction"] = total > 0 ? hidden / total : 1.0;
  }
  return m;
}

} // namespace cs
