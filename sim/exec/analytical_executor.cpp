#include "platform/shared_links.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/link_reservations.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_map>

namespace cs {
namespace {

constexpr double kSlack = 1e-9;

// One list-scheduling run: a heap of ready tasks by ready time; each stream runs one task at a time; a transfer
// starts once every link direction on its route has room for its rate beside other transfers, and moves in what the
// closed-form all-to-alls holding those links leave.
class AnalyticalRun {
public:
  AnalyticalRun(const TaskGraph& graph, const PlatformSpec& platform)
      : graph_(graph), platform_(platform), waiting_(graph.size()), ready_at_(graph.size(), 0.0),
        position_(graph.size(), 0), reserved_(platform.topology.links().size() * 2), held_(reserved_.size())
  {
    for (std::size_t s = 0; s < graph.streams().size(); ++s) {
      const auto& tasks = graph.stream_tasks(static_cast<int>(s));
      for (std::size_t i = 0; i < tasks.size(); ++i)
        position_[tasks[i]] = static_cast<int>(i);
    }
    for (std::size_t t = 0; t < graph.size(); ++t)
      waiting_[t] = graph.predecessor_count(static_cast<int>(t)) + (position_[t] > 0 ? 1 : 0);
  }

  double run(const std::vector<ExecutionObserver*>& observers)
  {
    using Item = std::pair<double, int>; // (ready time, task): earliest first, then lowest id
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    for (std::size_t t = 0; t < graph_.size(); ++t)
      if (waiting_[t] == 0)
        heap.emplace(0.0, static_cast<int>(t));
    auto release = [&](int t, double when) {
      ready_at_[t] = std::max(ready_at_[t], when);
      if (--waiting_[t] == 0)
        heap.emplace(ready_at_[t], t);
    };
    double makespan = 0;
    std::size_t done = 0;
    while (!heap.empty()) {
      const auto [ready, id] = heap.top();
      heap.pop();
      const Task& task = graph_.task(id);
      // Compute, delay, or a transfer to itself (its overhead only) take their seconds; a delay that holds shares of
      // links runs in what they leave.
      const auto* shares = task.kind == TaskKind::DELAY && graph_.has_link_shares() ? graph_.link_shares(id) : nullptr;
      const auto [start, end] = task.kind == TaskKind::TRANSFER && task.host != task.dst
                                    ? schedule_transfer(task, ready)
                                : shares ? schedule_holding(*shares, task.seconds, ready)
                                         : std::make_pair(ready, ready + task.seconds);
      makespan = std::max(makespan, end);
      ++done;
      for (auto* o : observers)
        o->on_task_end(id, start, end);
      auto [begin, last] = graph_.successors(id);
      for (const int* s = begin; s != last; ++s)
        release(*s, end);
      const auto& st = graph_.stream_tasks(task.stream);
      if (static_cast<std::size_t>(position_[id]) + 1 < st.size())
        release(st[position_[id] + 1], end);
    }
    if (done != graph_.size())
      throw std::logic_error("analytical executor stalled: the graph has unreachable tasks");
    return makespan;
  }

private:
  int direction(const LinkUse& use) const { return 2 * use.link + (use.up ? 0 : 1); }

  // A transfer that stands for copies of itself (TaskGraph::flow_copies): per link of its route, the flows of the
  // copies crossing it, and the slowest copy's rate (the step waits for it). Null when it stands for none.
  struct Folded {
    std::vector<double> copies;
    double bandwidth = 0;
  };
  const Folded* folded(const Task& task)
  {
    if (graph_.flow_copies().empty())
      return nullptr;
    const auto key = static_cast<std::int64_t>(task.host) << 32 | static_cast<std::uint32_t>(task.dst);
    auto it = folded_index_.find(key);
    if (it == folded_index_.end()) {
      const Topology& t = platform_.topology;
      const SharedLinks shared(t, copied_flows(t, task.host, task.dst, graph_.flow_copies().all()));
      Folded f{{}, shared.slowest_rate()};
      for (const auto& use : t.route(task.host, task.dst))
        f.copies.push_back(std::max(1.0, shared.flows_on(use)));
      it = folded_index_.emplace(key, folded_.size()).first;
      folded_.push_back(std::move(f));
    }
    return &folded_[it->second];
  }

  // The share of link direction d that the closed-form all-to-alls holding it leave at t.
  double left_at(int d, double t) const { return room(1 - held_[d].use_at(t)); }
  // What is left of a link, in [0, 1]: rounding's crumbs (under kSlack) are none.
  static double room(double left) { return left <= kSlack ? 0.0 : std::min(left, 1.0); }
  // The next time after t at which what holds link direction d changes (infinity when it never does).
  double next_hold_change(int d, double t) const
  {
    const std::size_t k = held_[d].after(t);
    return k < held_[d].steps.size() ? held_[d].steps[k].first : std::numeric_limits<double>::infinity();
  }

  // Seconds to move `bytes` from t0 at up to `bandwidth`, link i of `route` giving capacity(i) scaled by its
  // background availability and by what the all-to-alls holding it leave: the bottleneck integrated over time.
  template <class Capacity>
  double moving_seconds(double t0, double bytes, const std::vector<LinkUse>& route, const Capacity& capacity,
                        double bandwidth) const
  {
    double t = t0, left = bytes;
    for (;;) {
      double rate = bandwidth, next = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < route.size(); ++i) {
        const int d = direction(route[i]);
        double scale = left_at(d, t);
        next = std::min(next, next_hold_change(d, t));
        if (auto bg = platform_.background.find(route[i].link); bg != platform_.background.end()) {
          scale *= bg->second.at(t);
          next = std::min(next, bg->second.next_change(t));
        }
        rate = std::min(rate, capacity(i) * scale);
      }
      if (rate > 0 && left / rate <= next - t)
        return t + left / rate - t0;
      if (std::isinf(next))
        throw std::logic_error("analytical executor: the links held never leave a transfer room");
      left -= rate * (next - t);
      t = next;
    }
  }

  // The earliest time >= t at which `share` more fits on link direction d for `duration` seconds.
  double earliest_fit(int d, double t, double share, double duration) const
  {
    t = std::max(t, reserved_[d].exclusive_until);
    if (reserved_[d].empty())
      return t;
    return reserved_[d].fit(t, duration, 1 + kSlack - share);
  }

  // The fixed overhead runs first; then the data moves once every link has room for its rate beside other transfers,
  // for latency plus bytes over the bottleneck rate (integrated over background load and over what closed-form
  // all-to-alls holding its links leave, where a link has either).
  std::pair<double, double> schedule_transfer(const Task& task, double ready)
  {
    const auto& route = platform_.topology.route(task.host, task.dst);
    const auto& links = platform_.topology.links();
    const Folded* fold = folded(task);
    // What link i leaves this flow: its capacity over the flows that cross it with the copies this one stands for.
    auto capacity = [&](std::size_t i) { return links[route[i].link].bandwidth / (fold ? fold->copies[i] : 1.0); };
    double latency = 0, bandwidth = fold ? fold->bandwidth : std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < route.size(); ++i) {
      latency += links[route[i].link].latency;
      bandwidth = std::min(bandwidth, capacity(i));
    }
    if (task.rate > 0)
      bandwidth = std::min(bandwidth, task.rate);
    bool varies = false; // a link on the route carries background load or closed forms' holds
    for (const auto& use : route)
      varies = varies || !held_[direction(use)].empty() || platform_.background.count(use.link) > 0;
    auto duration_from = [&](double move) {
      return latency +
             (varies ? moving_seconds(move + latency, task.bytes, route, capacity, bandwidth) : task.bytes / bandwidth);
    };
    for (const auto& use : route) {
      if (!reserved_[direction(use)].empty())
        reserved_[direction(use)].prune(ready);
      if (!held_[direction(use)].empty())
        held_[direction(use)].prune(ready);
    }
    // A link is busy while the bytes go out, not while they propagate: the latency occupies no bandwidth (two
    // small messages on one NIC travel together, as they do on SimGrid).
    double move = ready + task.seconds;
    double duration = duration_from(move);
    for (int round = 0; round < 1000; ++round) {
      double fit = move;
      for (std::size_t i = 0; i < route.size(); ++i)
        fit = std::max(fit, earliest_fit(direction(route[i]), move, bandwidth / capacity(i), duration - latency));
      if (fit <= move)
        break;
      move = fit;
      duration = duration_from(move);
    }
    const double end = move + duration, busy_until = end - latency;
    for (std::size_t i = 0; i < route.size(); ++i)
      hold(direction(route[i]), move, busy_until, bandwidth / capacity(i));
    return {std::max(ready, move - task.seconds), end}; // one queued behind others starts when they clear
  }

  // A delay that holds `shares` of link directions (a closed-form all-to-all with its copies on the links between
  // switches) moves its payload in what those links have left: while others hold them it runs as fast as the
  // tightest leaves room for (its shares scaled down alike), and ends once it has done `seconds` of work at its full
  // shares. Work-conserving and first come, first served: one that started earlier keeps its pace, as a transfer
  // keeps its reservation. [recon: SimGrid would share the links fairly; waiting until the whole share fits
  // serialised two passes' all-to-alls that each use 60% of a link, docs/scale.md]
  std::pair<double, double> schedule_holding(const std::vector<std::pair<int, double>>& shares, double seconds,
                                             double ready)
  {
    std::vector<double> changes; // when what holds these links changes, from `ready` on
    for (const auto& [d, share] : shares) {
      for (LinkReservations* link : {&reserved_[d], &held_[d]}) {
        if (!link->empty())
          link->prune(ready);
        if (link->exclusive_until > ready)
          changes.push_back(link->exclusive_until);
        for (std::size_t i = link->after(ready); i < link->steps.size(); ++i)
          changes.push_back(link->steps[i].first);
      }
    }
    std::sort(changes.begin(), changes.end());
    auto pace = [&](double t) { // the share of its full rate this delay gets at t
      double rate = 1;
      for (const auto& [d, share] : shares) {
        if (reserved_[d].exclusive_until > t)
          return 0.0;
        if (share > 0)
          rate = std::min(rate, room(1 - reserved_[d].use_at(t) - held_[d].use_at(t)) / share);
      }
      return rate;
    };
    struct Run {
      double from, to, pace;
    };
    std::vector<Run> runs;
    double t = ready, done = 0;
    for (std::size_t k = 0;;) {
      while (k < changes.size() && changes[k] <= t)
        ++k;
      const double next = k < changes.size() ? changes[k] : std::numeric_limits<double>::infinity();
      const double rate = pace(t);
      if (rate > 0 && t + (seconds - done) / rate <= next) {
        runs.push_back({t, t + (seconds - done) / rate, rate});
        break;
      }
      if (std::isinf(next))
        throw std::logic_error("analytical executor: link reservations never leave a delay room");
      if (rate > 0) {
        runs.push_back({t, next, rate});
        done += rate * (next - t);
      }
      t = next;
    }
    for (const Run& run : runs)
      for (const auto& [d, share] : shares)
        held_[d].add(run.from, run.to, share * run.pace);
    return {runs.front().from, runs.back().to};
  }

  // Reserves `share` of link direction d over [from, to): a share that fills the link holds it alone.
  void hold(int d, double from, double to, double share)
  {
    auto& link = reserved_[d];
    if (share >= 1 - kSlack)
      link.exclusive_until = std::max(link.exclusive_until, to);
    else
      link.add(from, to, share);
  }

  const TaskGraph& graph_;
  const PlatformSpec& platform_;
  std::vector<int> waiting_;
  std::vector<double> ready_at_;
  std::vector<int> position_;
  std::vector<LinkReservations> reserved_; // what transfers reserve
  std::vector<LinkReservations> held_;     // what closed-form all-to-alls hold (delays with link shares)
  std::unordered_map<std::int64_t, std::size_t> folded_index_; // (src, dst) -> folded_: looked up, never iterated
  std::vector<Folded> folded_;
};

} // namespace

Timeline run_analytical(const TaskGraph& graph, const PlatformSpec& platform,
                        const std::vector<ExecutionObserver*>& observers)
{
  if (!graph.finalized())
    throw std::logic_error("run_analytical needs a finalized task graph");
  TimelineRecorder recorder(graph.size());
  std::vector<ExecutionObserver*> all{&recorder};
  all.insert(all.end(), observers.begin(), observers.end());
  const double makespan = AnalyticalRun(graph, platform).run(all);
  for (auto* o : all)
    o->on_run_end(makespan);
  return std::move(recorder.timeline());
}

} // namespace cs
