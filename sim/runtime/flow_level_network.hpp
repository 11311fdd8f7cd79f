// A flow-level network (and disk) model for actor workloads whose cost per flow event does not grow with the flows
// in flight: each flow is served by one resource, its bottleneck when it starts, by weighted processor sharing.
#pragma once

#include "platform/link_availability.hpp"

#include <boost/heap/d_ary_heap.hpp>
#include <cstddef>
#include <queue>
#include <vector>

namespace cs {

/** Resources (a link direction, a shared link, a disk) of fixed capacity, crossed by flows.
 *
 *  Sharing. A flow of weight w is charged to the resource on its route that offers it the smallest share
 *  (s_r = cap_r / (W_r + w), W_r the weights present at r; ties go to the resource nearest the destination), and
 *  moves at cap_b · w / W_b there. On each other resource of its route it weighs w · s_b / s_r, the share it gets
 *  at its bottleneck over the share it would get there, so the capacity it leaves goes to the flows charged there.
 *  Where one resource limits each flow (a reducer's downlink, a rack's oversubscribed uplink, a disk) this is
 *  SimGrid's weighted max-min sharing exactly. Elsewhere it approximates it: charges and weights are set when a
 *  flow joins and refreshed a few at a time (after each join or end, the next few flows crossing each resource of
 *  the route; on a change of capacity, every flow crossing the resource). That keeps a flow event at
 *  O(route² · log flows) whatever is in flight (docs/mapreduce.md, "Network backends").
 *
 *  Each resource keeps a virtual clock V (bytes a unit-weight flow charged to it has been served); a flow ends when
 *  V reaches its tag (V at its start plus bytes / w), so a start or end touches only the resources on its route. */
class FlowLevelNetwork {
public:
  static constexpr double kNever = 1e300;
  /** After each flow joins or ends, `refresh_per_event` flows crossing each resource of its route (in turn, round
   *  robin) are charged again from the present weights. */
  explicit FlowLevelNetwork(int refresh_per_event = 3) : refresh_per_event_(refresh_per_event) {}

  /** A resource of `capacity` bytes/s, scaled over time by `schedule` when given (kept by the caller). */
  int add_resource(double capacity, const LinkAvailability* schedule = nullptr);
  /** Starts a flow of `bytes` over `resources` (distinct ids, route order) at `now`: it joins them after `latency`
   *  seconds and is then served with weight `weight` (> 0). Returns its id, valid until it ends or is cancelled. */
  int start(double now, const std::vector<int>& resources, double bytes, double latency, double weight);
  /** Removes a flow that has not ended; the others speed up from `now`. */
  void cancel(double now, int id);
  /** When the next flow joins or ends (kNever when none will). */
  double next_event();
  /** Handles every event due by `now`, in time order; returns the ids of the flows that ended. */
  std::vector<int> advance(double now);
  /** Flows started and not yet ended or cancelled. */
  std::size_t in_flight() const { return in_flight_; }

private:
  struct Charge { // a flow's place in its resource's queue
    double tag;
    int flow;
    long generation;
    bool operator>(const Charge& o) const { return tag != o.tag ? tag > o.tag : flow > o.flow; }
  };
  struct EndAt { // a resource's next flow end (kNever: none)
    double time;
    int resource;
  };
  struct LaterEnd {
    bool operator()(const EndAt& a, const EndAt& b) const
    {
      return a.time != b.time ? a.time > b.time : a.resource > b.resource;
    }
  };
  // One entry per resource, moved in place: no stale entries pile up however often a resource's end moves.
  using EndQueue = boost::heap::d_ary_heap<EndAt, boost::heap::arity<4>, boost::heap::mutable_<true>,
                                           boost::heap::compare<LaterEnd>>;
  struct Resource {
    double base = 0;     // capacity without background load
    double capacity = 0; // now
    const LinkAvailability* schedule = nullptr;
    double weights = 0; // of the flows crossing it
    double virtual_time = 0;
    double updated = 0;
    EndQueue::handle_type end;
    std::vector<int> crossing_flows; // ids of the active flows crossing it, any order
    std::size_t refresh_cursor = 0;
    std::priority_queue<Charge, std::vector<Charge>, std::greater<>> charged;
  };
  enum class State { LATENT, ACTIVE, OFF };
  struct Flow {
    std::vector<int> route;
    double bytes = 0;
    double weight = 1;
    std::vector<int> position;    // per route entry: its index in that resource's crossing_flows
    std::vector<double> presence; // per route entry: the weight it adds there (its own where charged)
    int charged_to = -1;
    double tag = 0;      // in charged_to's virtual time
    long generation = 0; // bumped when it ends or moves, which makes its queue entries stale
    State state = State::OFF;
  };
  enum class Kind { JOIN, CAPACITY };
  struct Event { // a flow joining after its latency, or a resource's capacity changing
    double time;
    Kind kind;
    int index;    // flow (JOIN) or resource (CAPACITY)
    long version; // flow generation (JOIN)
    bool operator>(const Event& o) const
    {
      if (time != o.time)
        return time > o.time;
      return kind != o.kind ? kind > o.kind : index > o.index;
    }
  };

  bool stale(const Event& e) const;
  void bring(Resource& r, double t);
  void join(int id, double t);
  /** The route index of the resource offering `f` the smallest share (shares_ holds them all); `counted`: its own
   *  presence is already in the weights. */
  std::size_t bottleneck(const Flow& f, bool counted);
  double presence_at(const Flow& f, std::size_t k, std::size_t best) const;
  void charge(int id, std::size_t best, double remaining);
  void attach(int id, double t, double remaining);
  void refresh_around(int id, double t);
  void leave(int id, double t);
  void reschedule(int r);
  void end_due(int r, double t, std::vector<int>& ended);
  void change_capacity(int r, double t);
  void recharge(int id, double t);

  std::vector<Resource> resources_;
  std::vector<Flow> flows_;
  std::vector<int> free_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  EndQueue ends_;
  std::size_t in_flight_ = 0;
  std::vector<double> shares_; // scratch for attach()
  int refresh_per_event_;
};

} // namespace cs
