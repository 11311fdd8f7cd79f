#include "sim/runtime/flow_level_network.hpp"

#include <algorithm>
#include <cmath>

namespace cs {

namespace {
// A flow this close to its end (in seconds at its current rate) has ended: it keeps rounding from leaving an end a
// hair after the clock the engine woke at.
constexpr double kEndSlack = 1e-9;
} // namespace

int FlowLevelNetwork::add_resource(double capacity, const LinkAvailability* schedule)
{
  resources_.push_back({});
  Resource& r = resources_.back();
  r.base = capacity;
  r.capacity = capacity;
  r.schedule = schedule;
  const int id = static_cast<int>(resources_.size()) - 1;
  r.end = ends_.push({kNever, id});
  if (schedule) {
    r.capacity = capacity * schedule->at(0);
    if (const double next = schedule->next_change(0); next < kNever)
      events_.push({next, Kind::CAPACITY, id, 0});
  }
  return id;
}

int FlowLevelNetwork::start(double now, const std::vector<int>& resources, double bytes, double latency, double weight)
{
  int id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<int>(flows_.size());
    flows_.push_back({});
  }
  Flow& f = flows_[id];
  f.route = resources;
  f.bytes = bytes;
  f.weight = weight;
  f.charged_to = -1;
  f.state = State::LATENT;
  ++in_flight_;
  events_.push({now + std::max(0.0, latency), Kind::JOIN, id, f.generation});
  return id;
}

void FlowLevelNetwork::cancel(double now, int id)
{
  Flow& f = flows_.at(id);
  if (f.state == State::ACTIVE) {
    leave(id, now);
    return;
  }
  if (f.state == State::LATENT) {
    f.state = State::OFF;
    ++f.generation;
    free_.push_back(id);
    --in_flight_;
  }
}

bool FlowLevelNetwork::stale(const Event& e) const
{
  if (e.kind == Kind::CAPACITY)
    return false;
  return flows_[e.index].generation != e.version || flows_[e.index].state != State::LATENT;
}

double FlowLevelNetwork::next_event()
{
  while (!events_.empty() && stale(events_.top()))
    events_.pop();
  const double end = ends_.empty() ? kNever : ends_.top().time;
  return std::min(end, events_.empty() ? kNever : events_.top().time);
}

std::vector<int> FlowLevelNetwork::advance(double now)
{
  std::vector<int> ended;
  for (;;) {
    while (!events_.empty() && stale(events_.top()))
      events_.pop();
    const double end = ends_.empty() ? kNever : ends_.top().time;
    const double other = events_.empty() ? kNever : events_.top().time;
    if (std::min(end, other) > now) // (kNever > any clock: nothing pending ends the loop too)
      break;
    if (end <= other) { // ends first at equal times, before a join or a capacity change at the same instant
      end_due(ends_.top().resource, end, ended);
      continue;
    }
    const Event e = events_.top();
    events_.pop();
    if (e.kind == Kind::CAPACITY) {
      change_capacity(e.index, e.time);
    } else if (flows_[e.index].route.empty()) { // nothing to cross: it ends once its latency is paid
      leave(e.index, e.time);
      ended.push_back(e.index);
    } else {
      join(e.index, e.time);
    }
  }
  return ended;
}

void FlowLevelNetwork::bring(Resource& r, double t)
{
  if (t <= r.updated)
    return;
  if (r.weights > 0)
    r.virtual_time += (t - r.updated) * r.capacity / r.weights;
  r.updated = t;
}

void FlowLevelNetwork::join(int id, double t)
{
  Flow& f = flows_[id];
  f.state = State::ACTIVE;
  f.position.resize(f.route.size());
  for (std::size_t k = 0; k < f.route.size(); ++k) {
    Resource& res = resources_[f.route[k]];
    f.position[k] = static_cast<int>(res.crossing_flows.size());
    res.crossing_flows.push_back(id);
  }
  attach(id, t, f.bytes / f.weight);
  refresh_around(id, t);
}

void FlowLevelNetwork::refresh_around(int id, double t)
{
  if (refresh_per_event_ <= 0)
    return;
  // Round robin over each resource's crossing flows: every flow is refreshed as often as flows come and go near it.
  // (recharge never adds flows, so flows_[id] stays where it is)
  for (std::size_t h = 0; h < flows_[id].route.size(); ++h) {
    Resource& res = resources_[flows_[id].route[h]];
    const std::size_t n = std::min<std::size_t>(refresh_per_event_, res.crossing_flows.size());
    for (std::size_t i = 0; i < n; ++i) {
      res.refresh_cursor = (res.refresh_cursor + 1) % res.crossing_flows.size();
      const int other = res.crossing_flows[res.refresh_cursor];
      if (other != id && flows_[other].state == State::ACTIVE)
        recharge(other, t);
    }
  }
}

std::size_t FlowLevelNetwork::bottleneck(const Flow& f, bool counted)
{
  std::size_t best = 0;
  shares_.resize(f.route.size());
  for (std::size_t k = 0; k < f.route.size(); ++k) { // its share at each resource, as if it joined now
    const Resource& res = resources_[f.route[k]];
    const double others = counted ? res.weights - f.presence[k] : res.weights;
    shares_[k] = res.capacity / std::max(1e-300, others + f.weight);
    if (shares_[k] <= shares_[best]) // ties: the resource nearest the destination
      best = k;
  }
  return best;
}

double FlowLevelNetwork::presence_at(const Flow& f, std::size_t k, std::size_t best) const
{
  // Where it is not charged it moves its bottleneck share, not shares_[k]: it weighs there in that proportion, so
  // the capacity it leaves goes to the flows charged there.
  return k == best ? f.weight : f.weight * shares_[best] / shares_[k];
}

void FlowLevelNetwork::charge(int id, std::size_t best, double remaining)
{
  Flow& f = flows_[id];
  f.charged_to = f.route[best];
  Resource& b = resources_[f.charged_to];
  f.tag = b.virtual_time + remaining;
  b.charged.push({f.tag, id, f.generation});
}

void FlowLevelNetwork::attach(int id, double t, double remaining)
{
  Flow& f = flows_[id];
  for (int r : f.route)
    bring(resources_[r], t);
  const std::size_t best = bottleneck(f, false);
  f.presence.resize(f.route.size());
  for (std::size_t k = 0; k < f.route.size(); ++k) {
    f.presence[k] = presence_at(f, k, best);
    resources_[f.route[k]].weights += f.presence[k];
  }
  charge(id, best, remaining);
  for (int r : f.route)
    reschedule(r);
}

void FlowLevelNetwork::leave(int id, double t)
{
  Flow& f = flows_[id];
  if (f.state == State::ACTIVE)
    for (std::size_t k = 0; k < f.route.size(); ++k) {
      const int r = f.route[k];
      Resource& res = resources_[r];
      bring(res, t);
      res.weights -= f.presence[k];
      // Out of the crossing list: the last entry takes its place.
      const int moved = res.crossing_flows.back();
      res.crossing_flows[f.position[k]] = moved;
      Flow& m = flows_[moved];
      for (std::size_t q = 0; q < m.route.size(); ++q)
        if (m.route[q] == r)
          m.position[q] = f.position[k];
      res.crossing_flows.pop_back();
      if (res.crossing_flows.empty())
        res.weights = 0; // no drift left behind by sums of unequal weights
      reschedule(r);
    }
  const bool was_active = f.state == State::ACTIVE;
  f.state = State::OFF;
  ++f.generation;
  free_.push_back(id);
  --in_flight_;
  if (was_active)
    refresh_around(id, t);
}

void FlowLevelNetwork::reschedule(int r)
{
  Resource& res = resources_[r];
  while (!res.charged.empty()) {
    const Charge& c = res.charged.top();
    const Flow& f = flows_[c.flow];
    if (f.generation == c.generation && f.state == State::ACTIVE)
      break;
    res.charged.pop();
  }
  double time = kNever;
  if (!res.charged.empty())
    time = res.updated + std::max(0.0, (res.charged.top().tag - res.virtual_time) * res.weights / res.capacity);
  if ((*res.end).time != time)
    ends_.update(res.end, {time, r});
}

void FlowLevelNetwork::end_due(int r, double t, std::vector<int>& ended)
{
  Resource& res = resources_[r];
  bring(res, t);
  for (;;) {
    reschedule(r); // drops the queue's dead entries
    if (res.charged.empty())
      return;
    const Charge c = res.charged.top();
    if ((c.tag - res.virtual_time) * res.weights / res.capacity > kEndSlack)
      return;
    res.charged.pop();
    leave(c.flow, t);
    ended.push_back(c.flow);
  }
}

void FlowLevelNetwork::change_capacity(int r, double t)
{
  Resource& res = resources_[r];
  bring(res, t);
  res.capacity = res.base * res.schedule->at(t);
  reschedule(r);
  for (std::size_t i = 0; i < res.crossing_flows.size(); ++i) // (a move keeps every crossing list as it is)
    recharge(res.crossing_flows[i], t);
  if (const double next = res.schedule->next_change(t); next < kNever)
    events_.push({next, Kind::CAPACITY, r, 0});
}

void FlowLevelNetwork::recharge(int id, double t)
{
  Flow& f = flows_[id];
  const std::size_t best = bottleneck(f, true);
  bool same = f.route[best] == f.charged_to;
  for (std::size_t k = 0; same && k < f.route.size(); ++k)
    same = std::abs(presence_at(f, k, best) - f.presence[k]) <= 1e-6 * f.weight;
  if (same) // most refreshes: nothing moves, no resource is touched
    return;
  Resource& from = resources_[f.charged_to];
  bring(from, t);
  const double remaining = std::max(0.0, f.tag - from.virtual_time);
  for (std::size_t k = 0; k < f.route.size(); ++k) {
    Resource& res = resources_[f.route[k]];
    bring(res, t);
    const double presence = presence_at(f, k, best);
    res.weights = std::max(0.0, res.weights + presence - f.presence[k]);
    f.presence[k] = presence;
  }
  if (f.route[best] != f.charged_to) {
    ++f.generation; // its entry in the old queue is stale now
    charge(id, best, remaining);
  }
  for (int r : f.route)
    reschedule(r);
}

} // namespace cs
