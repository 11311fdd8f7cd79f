#include "workloads/training/training_metrics.hpp"

#include "base/statistics.hpp"
#include "workloads/training/moe_metrics.hpp"

#include <algorithm>
#include <map>

namespace cs {
namespace {

// The mean spacing of iteration ends (an iteration ends with its last optimizer step); with one iteration, its end.
double iteration_time(const TrainingGraph& tr, const Timeline& tl)
{
  std::vector<double> ends;
  for (const auto& opts : tr.optimizer_tasks) {
    double end = 0;
    for (int t : opts)
      end = std::max(end, tl.end[t]);
    ends.push_back(end);
  }
  return ends.size() > 1 ? (ends.back() - ends.front()) / (ends.size() - 1) : ends.front();
}

// What the run's tasks add up to: traffic by tier, busy time per host, compute by phase, gradient-sync spans.
// A DELAY standing for one member's share of a collective priced by its closed form (models/collectives/lowering).
bool is_closed_form(const TaskGraph& g, const Task& t)
{
  if (t.kind != TaskKind::DELAY || t.labels.comm == CommKind::NONE)
    return false;
  const std::string& name = g.names()[t.name];
  static const std::string suffix = "/closed-form";
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct Totals {
  double intra = 0, inter = 0;
  std::vector<double> compute_busy, comm_busy;
  std::map<std::string, double> phase_time;         // compute seconds by phase, all ranks
  std::map<std::pair<int, int>, Intervals> buckets; // per (iteration, bucket): its transfers
  std::vector<double> link_bytes;                   // per link, a byte counted on every link it crosses
};

Totals totals(const TrainingGraph& tr, const Timeline& tl, const PlatformSpec& platform)
{
  const TaskGraph& g = tr.graph;
  const auto& topo = platform.topology;
  Totals out;
  out.link_bytes.assign(topo.links().size(), 0.0);
  out.compute_busy.assign(tr.ranks, 0.0);
  out.comm_busy.assign(tr.ranks, 0.0);
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Task& t = g.task(static_cast<int>(id));
    const double d = tl.end[id] - tl.start[id];
    if (t.kind == TaskKind::COMPUTE) {
      out.compute_busy[t.host] += d;
      out.phase_time[g.names()[t.labels.phase]] += d;
    }
    if (is_closed_form(g, t)) { // a collective priced by its closed form: busy, its traffic counted at lowering
      out.comm_busy[t.host] += d;
      if (t.labels.comm == CommKind::GRADIENT_SYNC)
        out.buckets[{t.labels.iteration, t.labels.bucket}].emplace_back(tl.start[id], tl.end[id]);
      continue;
    }
    if (t.kind != TaskKind::TRANSFER || t.host == t.dst)
      continue;
    const bool same_machine = topo.vertex(topo.hosts()[t.host]).machine == topo.vertex(topo.hosts()[t.dst]).machine;
    (same_machine ? out.intra : out.inter) += t.bytes;
    for (const auto& use : topo.route(t.host, t.dst))
      out.link_bytes[use.link] += t.bytes;
    out.comm_busy[t.host] += d;
    if (t.labels.comm == CommKind::GRADIENT_SYNC)
      out.buckets[{t.labels.iteration, t.labels.bucket}].emplace_back(tl.start[id], tl.end[id]);
  }
  return out;
}

// Communication by kind on `rank`: the time some transfer of that kind it sends is moving, and the share of that
// time during which it also computes (hidden behind compute).
void communication_by_kind(RunMetrics& m, const TrainingGraph& tr, const Timeline& tl, int rank, int iterations)
{
  const TaskGraph& g = tr.graph;
  Intervals compute;
  std::map<std::string, Intervals> sent;
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Task& t = g.task(static_cast<int>(id));
    // An all-to-all holds the rank from its first task to its last, not only while its own sends move: NCCL runs it
    // as one kernel, and re-paired flows leave a rank few sends of its own (alltoall_spans, below).
    if (t.host != rank || tl.end[id] <= tl.start[id] ||
        (t.labels.comm == CommKind::EXPERT_ALLTOALL && t.kind != TaskKind::COMPUTE))
      continue;
    if (t.kind == TaskKind::COMPUTE)
      compute.emplace_back(tl.start[id], tl.end[id]);
    else if ((t.kind == TaskKind::TRANSFER && t.dst != t.host && t.labels.comm != CommKind::NONE) ||
             is_closed_form(g, t))
      sent[comm_kind_name(t.labels.comm)].emplace_back(tl.start[id], tl.end[id]);
  }
  if (tr.moe.steps > 0) {
    auto spans = alltoall_spans(g, tl, rank);
    for (const auto& span : spans[rank])
      sent[comm_kind_name(CommKind::EXPERT_ALLTOALL)].push_back(span);
  }
  const auto busy = union_of(compute);
  for (const auto& [kind, intervals] : sent) {
    const Intervals merged = union_of(intervals);
    const double total = length(merged), hidden = overlap(merged, busy);
    m.breakdown["communication_" + kind + "_s"] = total / iterations;
    m.breakdown["hidden_" + kind + "_fraction"] = total > 0 ? hidden / total : 1.0;
  }
}

// Per link tier (nvlink, nic, leaf-uplink, ...): bytes per iteration over every link of the tier, and the busy time
// per iteration of the tier's link that carries the most bytes, so a what-if on a fabric says where its traffic went
// and which tier saturates. Only those links' intervals are collected (a second pass): sorting every link's would
// cost a fifth of a large run.
void traffic_by_tier(RunMetrics& m, const Totals& t, const TrainingGraph& tr, const Timeline& tl,
                     const PlatformSpec& platform, double scale, int iterations)
{
  const Topology& topo = platform.topology;
  auto key = [](std::string tier) {
    std::replace(tier.begin(), tier.end(), '-', '_');
    return tier;
  };
  // Collectives priced by their closed forms move what their expansions would, over every replica's links (TP rank
  // 0's; the other TP ranks' go on their own links, so tier totals count them tp times).
  const auto& closed = tr.closed_form_link_bytes;
  auto on_link = [&](std::size_t l) { return t.link_bytes[l] + (l < closed.size() ? closed[l] : 0.0); };
  std::map<std::string, double> tier_bytes;
  std::map<std::string, int> heaviest; // tier -> its link with the most bytes
  for (std::size_t l = 0; l < t.link_bytes.size(); ++l) {
    if (on_link(l) <= 0)
      continue;
    const std::string& tier = topo.links()[l].tier;
    tier_bytes[tier] += t.link_bytes[l] * scale + (l < closed.size() ? closed[l] * tr.tensor_parallel : 0.0);
    auto [it, added] = heaviest.emplace(tier, static_cast<int>(l));
    if (!added && on_link(l) > on_link(it->second))
      it->second = static_cast<int>(l);
  }
  std::map<int, Intervals> busy;
  for (const auto& [tier, link] : heaviest)
    busy[link];
  const TaskGraph& g = tr.graph;
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Task& task = g.task(static_cast<int>(id));
    if (task.kind != TaskKind::TRANSFER || task.host == task.dst || tl.end[id] <= tl.start[id])
      continue;
    for (const auto& use : topo.route(task.host, task.dst))
      if (auto it = busy.find(use.link); it != busy.end())
        it->second.emplace_back(tl.start[id], tl.end[id]);
  }
  for (const auto& [tier, bytes] : tier_bytes)
    m.breakdown["bytes_" + key(tier)] = bytes / iterations;
  // A closed form leaves no intervals on the link: its bytes count as the least time they take at the link's rate
  // (both directions of a full-duplex link at once).
  for (const auto& [tier, link] : heaviest) {
    const PhysicalLink& l = topo.links()[link];
    const double closed_s =
        std::size_t(link) < closed.size() ? closed[link] / (l.bandwidth * (l.full_duplex ? 2 : 1)) : 0.0;
    m.breakdown["busiest_" + key(tier) + "_link_busy_s"] = (length(union_of(busy[link])) + closed_s) / iterations;
  }
}

} // namespace

RunMetrics training_metrics(const TrainingGraph& tr, const Timeline& tl, const PlatformSpec& platform)
{
  const int iterations = static_cast<int>(tr.optimizer_tasks.size());
  const double iteration = iteration_time(tr, tl);
  Totals t = totals(tr, tl, platform);
  const int busiest =
      static_cast<int>(std::max_element(t.compute_busy.begin(), t.compute_busy.end()) - t.compute_busy.begin());
  const double compute = t.compute_busy[busiest] / iterations;
  // Communication time: the union of the intervals during which some gradient bucket is being synchronised.
  Intervals spans;
  for (const auto& [key, transfers] : t.buckets) {
    double first = transfers.front().first, last = transfers.front().second;
    for (const auto& [a, b] : transfers) {
      first = std::min(first, a);
      last = std::max(last, b);
    }
    spans.emplace_back(first, last);
  }
  const double comm = length(union_of(spans)) / iterations;
  const double exposed = std::max(0.0, iteration - compute);
  // Every GPU's traffic: the graph holds TP rank 0 of each group (the others move the same bytes on their own links),
  // and the TP collectives themselves, folded into the passes, stay inside the node; the CP exchanges, folded in too,
  // move what their groups' rings (or all-to-alls) carry, inside nodes and between them.
  // Replicas left out (symmetric ones) move what replica 0 moves; collectives priced by their closed forms move
  // what their expansions would, over every rank of their groups.
  const double dp = double(tr.ranks) / (tr.pipeline_stages * tr.tensor_parallel);
  const double replicas = dp / tr.replicas_built;
  const double intra = (t.intra * replicas + tr.closed_form_intra_bytes) * tr.tensor_parallel +
                       (tr.tp_bytes_per_iteration + tr.cp_intra_bytes_per_iteration) * iterations;
  const double inter = (t.inter * replicas + tr.closed_form_inter_bytes) * tr.tensor_parallel +
                       tr.cp_inter_bytes_per_iteration * iterations;
  RunMetrics m;
  m.set(metric::iteration_time_s, iteration);
  m.set(metric::throughput_samples_per_s, tr.samples_per_iteration / iteration);
  m.set(metric::tokens_per_s, tr.tokens_per_iteration / iteration);
  m.set(metric::makespan_s, tl.makespan);
  m.set(metric::network_bytes, (intra + inter) / iterations);
  m.set(metric::network_bytes_intra_node, intra / iterations);
  m.set(metric::network_bytes_inter_node, inter / iterations);
  // Model FLOPs (Megatron's count of three passes, whatever is recomputed) and hardware FLOPs (recomputation
  // included: Narayanan et al.'s 96 instead of 72 under full recomputation) per GPU-second.
  m.set(metric::tflops_per_gpu, tr.model_flops_per_iteration / tr.ranks / iteration / 1e12);
  m.set(metric::hardware_tflops_per_gpu, tr.hardware_flops_per_iteration / tr.ranks / iteration / 1e12);
  m.set(metric::parameter_count, tr.parameters);
  m.set(metric::gradient_bucket_count, tr.buckets);
  m.set(metric::task_count, static_cast<double>(tr.graph.size()));
  m.set(metric::replicas_simulated, tr.replicas_built); // of dp; the others symmetric (docs/scale.md)
  m.breakdown["compute_s"] = compute;
  m.breakdown["communication_s"] = comm;
  m.breakdown["link_busy_busiest_rank_s"] = t.comm_busy[busiest] / iterations;
  if (tr.tensor_parallel > 1)
    m.breakdown["tp_communication_s"] = tr.tp_seconds_per_iteration;
  if (tr.context_parallel > 1)
    m.breakdown["cp_communication_s"] = tr.cp_seconds_per_iteration;
  m.breakdown["exposed_communication_s"] = exposed;
  m.breakdown["overlap_fraction"] = comm > 0 ? std::clamp(1.0 - exposed / comm, 0.0, 1.0) : 1.0;
  for (const auto& [phase, seconds] : t.phase_time)
    m.breakdown["compute_" + phase + "_s"] = seconds / tr.compute_streams.size() / iterations;
  communication_by_kind(m, tr, tl, busiest, iterations);
  traffic_by_tier(m, t, tr, tl, platform, replicas * tr.tensor_parallel, iterations);
  return m;
}

} // namespace cs
