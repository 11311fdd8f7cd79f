// Reservations of one link direction over time, for the analytical backend's list scheduling of transfers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace cs {

// Link directions are 2*link + (up ? 0 : 1). Each keeps its reservations: a transfer moving at rate r reserves
// r / capacity of every link it crosses from the moment its data moves until it ends, so a fat link carries
// several flows at once while a link the flow would fill is used by one flow at a time.
// Per link direction: its use over time as a step function (key: time the use changes; value: the use from
// then until the next key), with the past pruned as the heap's ready time advances. Queries and insertions
// touch only the steps inside their window.
// Steps live in a flat sorted vector: a link holds a few dozen live steps, so scanning contiguous memory beats
// a tree's pointer chasing (it was a fifth of a 1,024-GPU all-to-all). `head` skips the pruned past.
struct LinkReservations {
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

} // namespace cs
