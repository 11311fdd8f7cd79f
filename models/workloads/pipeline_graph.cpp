#include "models/workloads/pipeline_graph.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace cs {

PipelineGraph build_pipeline(const PipelineSchedule& schedule, int p, int vpp, int m, const std::vector<StageCost>& costs,
                             const std::vector<int>& hosts)
{
  PipelineGraph out;
  const int v = schedule.chunks(vpp);
  out.devices = p;
  out.chunks = v;
  out.microbatches = m;
  if (static_cast<int>(costs.size()) != p * v || static_cast<int>(hosts.size()) != p)
    throw std::invalid_argument("build_pipeline: costs must have devices x chunks entries and hosts one per device");
  out.order = schedule.order(p, v, m);
  TaskGraph& g = out.graph;
  std::vector<int> comm(p);
  for (int d = 0; d < p; ++d) {
    out.compute_streams.push_back(g.add_stream(hosts[d], "compute"));
    comm[d] = g.add_stream(hosts[d], "p2p");
  }
  // Create every op's task in schedule order per device, then wire the data dependencies.
  std::map<std::tuple<bool, int, int>, int> task_of; // (forward, microbatch, virtual stage) -> task
  out.op_tasks.resize(p);
  out.busy_s.assign(p, 0.0);
  const auto fwd = g.intern("forward"), bwd = g.intern("backward");
  for (int d = 0; d < p; ++d)
    for (const auto& op : out.order[d]) {
      const int vs = op.chunk * p + d;
      const StageCost& c = costs[vs];
      double t = op.forward ? c.forward_s : c.backward_s;
      TaskLabels lab{0, vs, op.microbatch, -1, op.forward ? fwd : bwd};
      int task = g.add_compute(out.compute_streams[d], t, op.forward ? "stage_forward" : "stage_backward", "given", lab);
      task_of[{op.forward, op.microbatch, vs}] = task;
      out.op_tasks[d].push_back(task);
      out.busy_s[d] += t;
    }
  const int stages = p * v;
  auto link = [&](int before, int from_vs, int after, int to_vs, double bytes, int mb) {
    int from_dev = from_vs % p, to_dev = to_vs % p;
    if (from_dev == to_dev || bytes <= 0) {
      g.add_dependency(before, after);
      return;
    }
    int t = g.add_transfer(comm[from_dev], hosts[from_dev], hosts[to_dev], bytes, "p2p",
                           TaskLabels{0, from_vs, mb, -1, g.intern("p2p")});
    g.add_dependency(before, t);
    g.add_dependency(t, after);
  };
  for (int mb = 0; mb < m; ++mb)
    for (int vs = 0; vs < stages; ++vs) {
      if (vs > 0)
        link(task_of.at({true, mb, vs - 1}), vs - 1, task_of.at({true, mb, vs}), vs, costs[vs - 1].activation_bytes, mb);
      if (vs + 1 < stages)
        link(task_of.at({false, mb, vs + 1}), vs + 1, task_of.at({false, mb, vs}), vs, costs[vs].activation_bytes, mb);
      else
        g.add_dependency(task_of.at({true, mb, vs}), task_of.at({false, mb, vs}));
    }
  g.finalize(); // throws std::logic_error when the schedule's order contradicts the data dependencies
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
