// Collective costs: alpha-beta closed forms per algorithm and protocol, an NCCL-like tuner, and step-wise expansion.
#pragma once

#include "models/collectives/collective.hpp"

namespace cs {

/** The closed-form time of one collective with one algorithm and protocol; +inf when the algorithm does not
 *  apply (e.g. nvls without an NVLS switch, rhd on a non-power-of-two group). */
double collective_time(const std::string& kind, const std::string& algorithm, const ProtocolParams& protocol,
                       double bytes, const GroupShape& shape);

/** Whether `algorithm`'s closed form equals its flows on an idle non-blocking fabric (false for unknown names). */
bool closed_form_exact(const std::string& algorithm);

/** The tuner's choice: the fastest (algorithm, protocol) by the closed forms, or the forced algorithm's best
 *  protocol. Throws std::invalid_argument for an unknown kind or algorithm, or one that cannot run the kind. */
struct CollectiveChoice {
  std::string algorithm;
  ProtocolParams protocol;
  double seconds = 0; // closed-form estimate
};
CollectiveChoice choose_collective(const std::string& kind, const std::string& algorithm, double bytes,
                                   const GroupShape& shape);

/** Emits the collective's transfers into `graph` on streams from `pool`, step by step, with inter-node traffic
 *  aggregated per node pair where the algorithm sends to many peers at once (all-to-all). Returns, per rank,
 *  the tasks after which the rank holds its result. */
std::vector<std::vector<int>> expand_collective(TaskGraph& graph, StreamPool& pool, const PlatformSpec& platform,
                                                const CollectiveRequest& request, const CollectiveChoice& choice);

/** One collective as a single delay of its closed-form time on `stream`, after `after` (-1 = none): what a
 *  symmetric rank sees when the other ranks are not simulated (the planner's one-replica graphs). */
int add_closed_form_collective(TaskGraph& graph, int stream, const std::string& kind, double bytes,
                               const PlatformSpec& platform, const std::vector<int>& group_hosts, int after,
                               TaskLabels labels);

} // namespace cs
