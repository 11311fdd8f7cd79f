// An all-to-all-v's per-pair flows replayed as a fluid under max-min fair sharing: its closed form where links
// between switches bind (an oversubscribed fabric), and copies of the group share them.
#pragma once

#include "platform/topology.hpp"

#include <vector>

namespace cs {

/** How the flows are sent and what the links carry. */
struct FluidAllToAllParams {
  int slots = 8;         // concurrent sends per rank: peer k (in ring order, pairs with bytes only) on slot k % slots
  double efficiency = 1; // payload share of what a link carries (the protocol's)
  double rate_cap = 0;   // bytes/s one flow carries at most, on the wire (0: the links' rates)
  double overhead = 0;   // seconds each flow waits before it moves (the protocol's per-transfer overhead)
};

/** When the replay ends, and when each rank's part does (its last send or receive, or its start if it has none). */
struct FluidAllToAll {
  double seconds = 0;
  std::vector<double> done;
};

/** The flows of expand_all_to_all_v when every link direction's capacity is split max-min fairly among the flows on
 *  it, as SimGrid shares it [recon]. Rank r is ready at ready[r] (empty: every rank at 0). Each rank sends to its
 *  peers in ring order from rank + 1, one flow after another on each of `slots` streams; a flow starts once both its
 *  ranks are ready, waits the overhead and its route's latency, then moves its bytes. `shifts` (0 first, from
 *  disjoint_shifts) place copies of the group on GPUs it leaves free: each copy's flows run as the group's do and load
 *  the links between switches with them, so a flow crossing such a link takes that link's capacity as many times as
 *  its copies cross it. Exact for the fluid; the events are the flows' completions and starts, so the cost grows with
 *  the number of pairs times the flows in flight. */
FluidAllToAll fluid_all_to_all_v(const std::vector<double>& matrix, const Topology& topology,
                                 const std::vector<int>& hosts, const std::vector<int>& shifts,
                                 const FluidAllToAllParams& params, const std::vector<double>& ready);

/** A hash of what fluid_all_to_all_v depends on besides `ready`, the links named in order of first use: equal for a
 *  group and its translate on a symmetric fabric, so one replay serves both (AllToAllChains). Building the flows costs
 *  a small part of running them. */
std::size_t fluid_all_to_all_v_signature(const std::vector<double>& matrix, const Topology& topology,
                                         const std::vector<int>& hosts, const std::vector<int>& shifts,
                                         const FluidAllToAllParams& params);

/** The same with every rank ready at 0: when the last flow ends. */
double fluid_all_to_all_v_seconds(const std::vector<double>& matrix, const Topology& topology,
                                  const std::vector<int>& hosts, const std::vector<int>& shifts,
                                  const FluidAllToAllParams& params);

} // namespace cs
