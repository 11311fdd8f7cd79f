// How identical flows that run at once share the links they cross: a simulated flow that stands for copies of itself
// (ranks or replicas left out of the graph) gets each link's capacity over the flows on it.
#pragma once

#include "platform/topology.hpp"

#include <utility>
#include <vector>

namespace cs {

/** One flow of a set that runs at once. `weight` > 1: that many parallel flows between the same two machines, each
 *  leaving and entering through a NIC of its own (a ring's channels), so the weight counts on every link of the route
 *  but its first and last. */
struct SharedFlow {
  int src = -1, dst = -1;
  double weight = 1;
};

/** The load a set of flows puts on the links: per link direction (2 x link + (up ? 0 : 1)), the flows crossing it. */
class SharedLinks {
public:
  SharedLinks(const Topology& topology, const std::vector<SharedFlow>& flows);
  /** Flows on one link direction (0 where none crosses it). */
  double flows_on(const LinkUse& use) const;
  /** The slowest flow's rate (bytes/s) when every link's capacity is split evenly among the flows on it: what one
   *  flow standing for all of them can move. +inf for no flows or routes without links. */
  double slowest_rate() const { return slowest_; }

private:
  std::vector<std::pair<int, double>> load_; // by direction, sorted
  double slowest_;
};

/** The copies of a transfer from `src` to `dst` at host `offsets` (0, the transfer itself, among them; copies past the
 *  last host are left out), as a flow set. */
std::vector<SharedFlow> copied_flows(const Topology& topology, int src, int dst, const std::vector<int>& offsets);

/** The offsets among `offsets` that shift the group `hosts` onto GPUs no offset kept before covers, in order: the
 *  copies of a group that run beside it (a shift onto the group's own members, or past the last GPU, is no copy).
 *  Offset 0, when first, keeps the group itself. */
std::vector<int> disjoint_shifts(const std::vector<int>& hosts, const std::vector<int>& offsets, int host_count);

/** A ring's flows over `hosts` in rank order, with their copies at `offsets`: one flow per pair of neighbours on
 *  different machines (the wrap included), weighted by the ring's `channels`. */
std::vector<SharedFlow> ring_flows(const Topology& topology, const std::vector<int>& hosts,
                                   const std::vector<int>& offsets, int channels);

} // namespace cs
