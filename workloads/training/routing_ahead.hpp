// MoE routings drawn ahead of the steps that ask for them, on a second thread: each draw is a pure function of its
// request, so drawing the next ones beside the current one gives the same routings in less wall time.
#pragma once

#include "models/moe/moe_routing.hpp"

#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace cs {

class RoutingAhead {
public:
  using Key = std::tuple<int, int, int, int>; // (iteration, layer, microbatch, group)
  using Ahead = std::vector<std::pair<Key, RoutingRequest>>;
  /** Keeps no more than `limit` routings drawn ahead and not yet taken (past it, nothing more is drawn ahead). */
  RoutingAhead(const RoutingModel& model, std::size_t limit) : model_(model), limit_(limit) {}
  /** The routing of step `key`, request `q`: the one drawn ahead if there is one, else drawn now, with `next` (steps
   *  to be asked for soon) drawn beside it, every other one on a second thread, and kept until taken. */
  Routing take(const Key& key, const RoutingRequest& q, const Ahead& next);
  /** Whether a routing for `key` was drawn ahead and not taken yet. */
  bool holds(const Key& key) const { return drawn_.count(key) > 0; }

private:
  const RoutingModel& model_;
  std::size_t limit_;
  std::map<Key, Routing> drawn_; // looked up and erased, never iterated
};

} // namespace cs
