#include "sim/exec/executor.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <cmath>
#include <queue>
#include <stdexcept>

namespace cs {

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

  // Link directions are 2*link + (up ? 0 : 1). Each keeps its reservations: a transfer moving at rate r reserves
  // r / capacity of every link it crosses from the moment its data moves until it ends, so a fat link carries
  // several flows at once while a link the flow would fill is used by one flow at a time.
  // Per link direction: its use over time as a step function (key: time the use changes; value: the use from
  // then until the next key), with the past pruned as the heap's ready time advances. Queries and insertions
  // touch only the steps inside their window.
  struct LinkUse {
    double exclusive_until = 0; // flows that fill the link: the old "one at a time" fast path
    std::map<double, double> steps;
    double use_at(double t) const
    {
      auto it = steps.upper_bound(t);
      return it == steps.begin() ? 0.0 : std::prev(it)->second;
    }
    void prune(double horizon)
    {
      while (steps.size() > 1 && std::next(steps.begin())->first <= horizon)
        steps.erase(steps.begin());
    }
    // Peak use over [t, t + duration), and the first change after t (when use may drop).
    std::pair<double, double> peak(double t, double duration) const
    {
      double peak_use = use_at(t), next = std::numeric_limits<double>::infinity();
      auto it = steps.upper_bound(t);
      if (it != steps.end())
        next = it->first;
      for (; it != steps.end() && it->first < t + duration - 1e-15; ++it)
        peak_use = std::max(peak_use, it->second);
      return {peak_use, next};
    }
    void add(double from, double to, double share)
    {
      for (double x : {from, to})
        if (!steps.count(x))
          steps.emplace(x, use_at(x));
      for (auto it = steps.find(from); it != steps.end() && it->first < to; ++it)
        it->second += share;
    }
  };
  std::vector<LinkUse> reserved(platform.topology.links().size() * 2);
  constexpr double kSlack = 1e-9;
  // The earliest time >= t at which `share` more fits on link direction d for `duration` seconds.
  auto earliest_fit = [&](int d, double t, double share, double duration) {
    t = std::max(t, reserved[d].exclusive_until);
    if (reserved[d].steps.empty())
      return t;
    for (int guard = 0; guard < 1000000; ++guard) {
      auto [used, next] = reserved[d].peak(t, duration);
      if (used + share <= 1 + kSlack || !std::isfinite(next))
        return t;
      t = next;
    }
    return t;
  };

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
      const auto& route = platform.topology.route(task.host, task.dst);
      const auto& links = platform.topology.links();
      double latency = 0, bandwidth = std::numeric_limits<double>::infinity();
      for (const auto& use : route) {
        latency += links[use.link].latency;
        bandwidth = std::min(bandwidth, links[use.link].bandwidth);
      }
      if (task.rate > 0)
        bandwidth = std::min(bandwidth, task.rate);
      bool loaded = false;
      if (!platform.background.empty())
        for (const auto& use : route)
          loaded = loaded || platform.background.count(use.link) > 0;
      auto duration_from = [&](double move) {
        if (!loaded)
          return latency + task.bytes / bandwidth;
        // Background traffic: integrate the bottleneck rate over its schedule, after the latency.
        std::vector<double> bws;
        std::vector<const LinkAvailability*> schedules;
        for (const auto& use : route) {
          bws.push_back(links[use.link].bandwidth);
          auto bg = platform.background.find(use.link);
          schedules.push_back(bg == platform.background.end() ? nullptr : &bg->second);
        }
        return latency + transfer_seconds(move + latency, task.bytes, bws, schedules, task.rate);
      };
      // The fixed overhead runs first; then the data moves once every link has room for its rate.
      for (const auto& use : route)
        if (!reserved[2 * use.link + (use.up ? 0 : 1)].steps.empty())
          reserved[2 * use.link + (use.up ? 0 : 1)].prune(ready);
      double move = start + task.seconds;
      double duration = duration_from(move);
      for (int round = 0; round < 1000; ++round) {
        double fit = move;
        for (const auto& use : route)
          fit = std::max(fit, earliest_fit(2 * use.link + (use.up ? 0 : 1), move,
                                           bandwidth / links[use.link].bandwidth, duration));
        if (fit <= move)
          break;
        move = fit;
        duration = duration_from(move);
      }
      end = move + duration;
      start = std::max(start, move - task.seconds); // a transfer queued behind others starts when they clear
      for (const auto& use : route) {
        auto& link = reserved[2 * use.link + (use.up ? 0 : 1)];
        const double share = bandwidth / links[use.link].bandwidth;
        if (share >= 1 - kSlack) {
          link.exclusive_until = std::max(link.exclusive_until, end);
        } else {
          link.add(move, end, share);
        }
      }
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
