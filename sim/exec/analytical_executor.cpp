#include "sim/exec/executor.hpp"

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>

namespace cs {

double analytical_transfer_time(const PlatformSpec& platform, int src_host, int dst_host, double bytes)
{
  if (src_host == dst_host)
    return 0.0;
  const Topology& t = platform.topology;
  return t.route_latency(src_host, dst_host) + bytes / t.route_bandwidth(src_host, dst_host);
}

Timeline run_analytical(const TaskGraph& graph, const PlatformSpec& platform,
                        const std::vector<ExecutionObserver*>& observers)
{
  if (!graph.finalized())
    throw std::logic_error("run_analytical needs a finalized task graph");
  const std::size_t n = graph.size();
  TimelineRecorder recorder(n);
  std::vector<int> waiting(n);
  std::vector<double> ready_at(n, 0.0);
  std::vector<int> position(n, 0);
  for (std::size_t s = 0; s < graph.streams().size(); ++s) {
    const auto& tasks = graph.stream_tasks(static_cast<int>(s));
    for (std::size_t i = 0; i < tasks.size(); ++i)
      position[tasks[i]] = static_cast<int>(i);
  }
  for (std::size_t t = 0; t < n; ++t)
    waiting[t] = graph.predecessor_count(static_cast<int>(t)) + (position[t] > 0 ? 1 : 0);

  // Link directions are 2*link + (up ? 0 : 1); each is free again at link_free[...].
  std::vector<double> link_free(platform.topology.links().size() * 2, 0.0);
  using Item = std::pair<double, int>; // (ready time, task): earliest first, then lowest id
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  for (std::size_t t = 0; t < n; ++t)
    if (waiting[t] == 0)
      heap.emplace(0.0, static_cast<int>(t));

  auto release = [&](int t, double when) {
    ready_at[t] = std::max(ready_at[t], when);
    if (--waiting[t] == 0)
      heap.emplace(ready_at[t], t);
  };
  double makespan = 0;
  std::size_t done = 0;
  while (!heap.empty()) {
    auto [ready, id] = heap.top();
    heap.pop();
    const Task& task = graph.task(id);
    double start = ready, end = ready;
    if (task.kind == TaskKind::TRANSFER && task.host != task.dst) {
      // The fixed overhead runs first; the links are held from the moment the data starts to move.
      const auto& route = platform.topology.route(task.host, task.dst);
      const auto& links = platform.topology.links();
      double move = start + task.seconds;
      double latency = 0, bandwidth = std::numeric_limits<double>::infinity();
      for (const auto& use : route) {
        move = std::max(move, link_free[2 * use.link + (use.up ? 0 : 1)]);
        latency += links[use.link].latency;
        bandwidth = std::min(bandwidth, links[use.link].bandwidth);
      }
      if (task.rate > 0)
        bandwidth = std::min(bandwidth, task.rate);
      bool loaded = false;
      if (!platform.background.empty())
        for (const auto& use : route)
          loaded = loaded || platform.background.count(use.link) > 0;
      if (loaded) { // background traffic: integrate the bottleneck rate over its schedule, after the latency
        std::vector<double> bws;
        std::vector<const LinkAvailability*> schedules;
        for (const auto& use : route) {
          bws.push_back(links[use.link].bandwidth);
          auto bg = platform.background.find(use.link);
          schedules.push_back(bg == platform.background.end() ? nullptr : &bg->second);
        }
        end = move + latency + transfer_seconds(move + latency, task.bytes, bws, schedules, task.rate);
      } else {
        end = move + latency + task.bytes / bandwidth;
      }
      start = std::max(start, move - task.seconds); // a transfer queued behind others starts when they clear
      for (const auto& use : route)
        link_free[2 * use.link + (use.up ? 0 : 1)] = end;
    } else {
      end = start + task.seconds; // compute, delay, or a transfer to itself (its overhead only)
    }
    makespan = std::max(makespan, end);
    ++done;
    recorder.on_task_end(id, start, end);
    for (auto* o : observers)
      o->on_task_end(id, start, end);
    auto [begin, last] = graph.successors(id);
    for (const int* s = begin; s != last; ++s)
      release(*s, end);
    const auto& st = graph.stream_tasks(task.stream);
    if (static_cast<std::size_t>(position[id]) + 1 < st.size())
      release(st[position[id] + 1], end);
  }
  if (done != n)
    throw std::logic_error("analytical executor stalled: the graph has unreachable tasks");
  recorder.on_run_end(makespan);
  for (auto* o : observers)
    o->on_run_end(makespan);
  return std::move(recorder.timeline());
}

} // namespace cs
