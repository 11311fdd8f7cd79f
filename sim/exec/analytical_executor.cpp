#include "sim/exec/executor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
  // Steps live in a flat sorted vector: a link holds a few dozen live steps, so scanning contiguous memory beats
  // a tree's pointer chasing (it was a fifth of a 1,024-GPU all-to-all). `head` skips the pruned past.
  struct LinkUse {
    double exclusive_until = 0; // flows that fill the link: the old "one at a time" fast path
    std::vector<std::pair<double, double>> steps;
    std::size_t head = 0;
    bool empty() const { return head == steps.size(); }
    std::size_t after(double t) const // index of the first step later than t
    {
      return static_cast<std::size_t>(
          std::upper_bound(steps.begin() + static_cast<std::ptrdiff_t>(head), steps.end(), t,
                           [](double x, const std::pair<double, double>& step) { return x < step.first; }) -
          steps.begin());
    }
    double use_at(double t) const
    {
      std::size_t i = after(t);
      return i == head ? 0.0 : steps[i - 1].second;
    }
    void prune(double horizon)
    {
      while (steps.size() - head > 1 && steps[head + 1].first <= horizon)
        ++head;
      if (head > 64 && head * 2 > steps.size()) {
        steps.erase(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(head));
        head = 0;
      }
    }
    // The earliest start >= t at which use stays within `limit` for `duration` seconds. A step over the limit
    // rules out every start before it ends, so the search jumps past the last such step in the window; past the
    // last change the use never drops again, and the search stops there.
    double fit(double t, double duration, double limit) const
    {
      for (;;) {
        std::size_t i = after(t);
        std::size_t blocked = steps.size();
        if (i > head && steps[i - 1].second > limit)
          blocked = i - 1;
        for (; i < steps.size() && steps[i].first < t + duration - 1e-15; ++i)
          if (steps[i].second > limit)
            blocked = i;
        if (blocked == steps.size())
          return t;
        if (blocked + 1 == steps.size())
          return std::max(t, steps[blocked].first);
        t = steps[blocked + 1].first;
      }
    }
    std::size_t key(double x) // index of the step starting at x, inserted with the use then if missing
    {
      std::size_t i = after(x);
      if (i > head && steps[i - 1].first == x)
        return i - 1;
      const double use = i == head ? 0.0 : steps[i - 1].second;
      steps.insert(steps.begin() + static_cast<std::ptrdiff_t>(i), {x, use});
      return i;
    }
    void add(double from, double to, double share)
    {
      key(to);
      for (std::size_t i = key(from); i < steps.size() && steps[i].first < to; ++i)
        steps[i].second += share;
    }
  };
  std::vector<LinkUse> reserved(platform.topology.links().size() * 2);
  constexpr double kSlack = 1e-9;
  // The earliest time >= t at which `share` more fits on link direction d for `duration` seconds.
  auto earliest_fit = [&](int d, double t, double share, double duration) {
    t = std::max(t, reserved[d].exclusive_until);
    if (reserved[d].empty())
      return t;
    return reserved[d].fit(t, duration, 1 + kSlack - share);
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
        if (!reserved[2 * use.link + (use.up ? 0 : 1)].empty())
          reserved[2 * use.link + (use.up ? 0 : 1)].prune(ready);
      double move = start + task.seconds;
      double duration = duration_from(move);
      for (int round = 0; round < 1000; ++round) {
        double fit = move;
        for (const auto& use : route)
          fit = std::max(fit, earliest_fit(2 * use.link + (use.up ? 0 : 1), move, bandwidth / links[use.link].bandwidth,
                                           duration));
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
