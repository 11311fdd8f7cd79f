#include "workloads/training/pipeline_graph.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace cs {

std::vector<std::vector<int>> stage_dag(const std::vector<StageCost>& costs)
{
  bool any = false;
  std::vector<std::vector<int>> dag;
  for (const auto& c : costs) {
    dag.push_back(c.successors);
    any = any || !c.successors.empty();
  }
  return any ? dag : std::vector<std::vector<int>>{};
}

PipelineTasks append_pipeline(TaskGraph& g, StreamPool& pool, const PipelineSchedule& schedule, int p, int vpp, int m,
                              const std::vector<StageCost>& costs, const std::vector<int>& hosts,
                              const std::vector<int>& compute_streams, const std::vector<int>& ready, TaskLabels base)
{
  const int v = schedule.chunks(vpp);
  if (static_cast<int>(costs.size()) != p * v || static_cast<int>(hosts.size()) != p)
    throw std::invalid_argument("append_pipeline: costs must have devices x chunks entries and hosts one per device");
  PipelineTasks out;
  const auto dag = stage_dag(costs);
  if (!dag.empty() && v != 1)
    throw std::invalid_argument("append_pipeline: a stage DAG runs one stage per device");
  out.order = dag.empty() ? schedule.order(p, v, m) : schedule.order_dag(dag, m);
  // Create every op's task in schedule order per device, then wire the data dependencies.
  std::map<std::tuple<bool, int, int>, int> task_of; // (forward, microbatch, virtual stage) -> task
  out.op_tasks.resize(p);
  out.busy_s.assign(p, 0.0);
  const auto fwd = g.intern("forward"), bwd = g.intern("backward");
  for (int d = 0; d < p; ++d) {
    bool first = true;
    for (const auto& op : out.order[d]) {
      const int vs = op.chunk * p + d;
      const StageCost& c = costs[vs];
      double t = op.forward ? c.forward_s : c.backward_s;
      TaskLabels lab = base;
      lab.stage = vs;
      lab.microbatch = op.microbatch;
      lab.phase = op.forward ? fwd : bwd;
      int task = g.add_compute(compute_streams[d], t, op.forward ? "stage_forward" : "stage_backward",
                               c.model.empty() ? "given" : c.model, lab);
      if (first && d < static_cast<int>(ready.size()) && ready[d] >= 0)
        g.add_dependency(ready[d], task);
      first = false;
      task_of[{op.forward, op.microbatch, vs}] = task;
      out.op_tasks[d].push_back(task);
      out.busy_s[d] += t;
    }
  }
  const int stages = p * v;
  // Sends are created in each device's op order, on one stream for activations and one for their gradients, so
  // no stream ever has to run a send before one the schedule needs earlier.
  auto link = [&](int before, int from_vs, int after, int to_vs, double bytes, int mb, int channel) {
    int from_dev = from_vs % p, to_dev = to_vs % p;
    if (from_dev == to_dev || bytes <= 0) {
      g.add_dependency(before, after);
      return;
    }
    TaskLabels lab = base;
    lab.stage = from_vs;
    lab.microbatch = mb;
    lab.phase = g.intern("p2p");
    int t = g.add_transfer(pool.get(hosts[from_dev], channel), hosts[from_dev], hosts[to_dev], bytes, "p2p", lab);
    g.add_dependency(before, t);
    g.add_dependency(t, after);
  };
  if (!dag.empty()) {
    // Every send is created in its sender's op order: activations to each successor after a forward, gradients to
    // each predecessor after a backward.
    std::vector<std::vector<std::pair<int, double>>> predecessors(p);
    for (int d = 0; d < p; ++d)
      for (std::size_t i = 0; i < costs[d].successors.size(); ++i)
        predecessors[costs[d].successors[i]].emplace_back(
            d, i < costs[d].successor_bytes.size() ? costs[d].successor_bytes[i] : 0.0);
    for (int d = 0; d < p; ++d)
      for (const auto& op : out.order[d]) {
        const int mb = op.microbatch;
        const auto& next = costs[d].successors;
        if (op.forward && next.empty())
          g.add_dependency(task_of.at({true, mb, d}), task_of.at({false, mb, d}));
        if (op.forward)
          for (std::size_t i = 0; i < next.size(); ++i)
            link(task_of.at({true, mb, d}), d, task_of.at({true, mb, next[i]}), next[i],
                 i < costs[d].successor_bytes.size() ? costs[d].successor_bytes[i] : 0.0, mb, 500);
        else
          for (const auto& [q, bytes] : predecessors[d])
            link(task_of.at({false, mb, d}), d, task_of.at({false, mb, q}), q, bytes, mb, 501);
      }
    return out;
  }
  for (int d = 0; d < p; ++d)
    for (const auto& op : out.order[d]) {
      const int vs = op.chunk * p + d, mb = op.microbatch;
      if (op.forward && vs + 1 < stages)
        link(task_of.at({true, mb, vs}), vs, task_of.at({true, mb, vs + 1}), vs + 1, costs[vs].activation_bytes, mb,
             500);
      if (op.forward && vs + 1 == stages)
        g.add_dependency(task_of.at({true, mb, vs}), task_of.at({false, mb, vs}));
      if (!op.forward && vs > 0)
        link(task_of.at({false, mb, vs}), vs, task_of.at({false, mb, vs - 1}), vs - 1, costs[vs - 1].activation_bytes,
             mb, 501);
    }
  return out;
}

PipelineGraph build_pipeline(const PipelineSchedule& schedule, int p, int vpp, int m,
                             const std::vector<StageCost>& costs, const std::vector<int>& hosts)
{
  PipelineGraph out;
  out.devices = p;
  out.chunks = schedule.chunks(vpp);
  out.microbatches = m;
  StreamPool pool(out.graph);
  for (int d = 0; d < p && d < static_cast<int>(hosts.size()); ++d)
    out.compute_streams.push_back(out.graph.add_stream(hosts[d], "compute"));
  PipelineTasks tasks = append_pipeline(out.graph, pool, schedule, p, vpp, m, costs, hosts, out.compute_streams, {},
                                        TaskLabels{0, -1, -1, -1, 0});
  out.order = std::move(tasks.order);
  out.op_tasks = std::move(tasks.op_tasks);
  out.busy_s = std::move(tasks.busy_s);
  out.graph.finalize(); // throws std::logic_error when the schedule's order contradicts the data dependencies
  return out;
}

double bubble_fraction(const PipelineGraph& p, double iteration_time)
{
  double busy = *std::max_element(p.busy_s.begin(), p.busy_s.end());
  return busy > 0 ? (iteration_time - busy) / busy : 0.0;
}

std::vector<int> peak_in_flight(const PipelineGraph& p)
{
  std::vector<int> peak(p.devices, 0);
  for (int d = 0; d < p.devices; ++d) {
    int held = 0;
    for (const auto& op : p.order[d]) {
      held += op.forward ? 1 : -1;
      peak[d] = std::max(peak[d], held);
    }
  }
  return peak;
}

} // namespace cs
