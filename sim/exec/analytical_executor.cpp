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
// starts once every link direction on its route has room for its rate.
class AnalyticalRun {
public:
  AnalyticalRun(const TaskGraph& graph, const PlatformSpec& platform)
      : graph_(graph), platform_(platform), waiting_(graph.size()), ready_at_(graph.size(), 0.0),
        position_(graph.size(), 0), reserved_(platform.topology.links().size() * 2)
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
      // links starts once they fit.
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

  // The earliest time >= t at which `share` more fits on link direction d for `duration` seconds.
  double earliest_fit(int d, double t, double share, double duration) const
  {
    t = std::max(t, reserved_[d].exclusive_until);
    if (reserved_[d].empty())
      return t;
    return reserved_[d].fit(t, duration, 1 + kSlack - share);
  }

  // The fixed overhead runs first; then the data moves once every link has room for its rate, for latency plus
  // bytes over the bottleneck rate (integrated over background load where a link has some).
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
    bool loaded = false;
    if (!platform_.background.empty())
      for (const auto& use : route)
        loaded = loaded || platform_.background.count(use.link) > 0;
    auto duration_from = [&](double move) {
      if (!loaded)
        return latency + task.bytes / bandwidth;
      std::vector<double> bws;
      std::vector<const LinkAvailability*> schedules;
      for (std::size_t i = 0; i < route.size(); ++i) {
        bws.push_back(capacity(i));
        auto bg = platform_.background.find(route[i].link);
        schedules.push_back(bg == platform_.background.end() ? nullptr : &bg->second);
      }
      return latency + transfer_seconds(move + latency, task.bytes, bws, schedules, task.rate);
    };
    for (const auto& use : route)
      if (!reserved_[direction(use)].empty())
        reserved_[direction(use)].prune(ready);
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
  // switches): it starts once every share fits beside what holds those links, and holds them until it ends.
  std::pair<double, double> schedule_holding(const std::vector<std::pair<int, double>>& shares, double seconds,
                                             double ready)
  {
    for (const auto& [d, share] : shares)
      if (!reserved_[d].empty())
        reserved_[d].prune(ready);
    double start = ready;
    for (int round = 0; round < 1000; ++round) {
      double fit = start;
      for (const auto& [d, share] : shares)
        fit = std::max(fit, earliest_fit(d, start, share, seconds));
      if (fit <= start)
        break;
      start = fit;
    }
    for (const auto& [d, share] : shares)
      hold(d, start, start + seconds, share);
    return {start, start + seconds};
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
  std::vector<LinkReservations> reserved_;
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
