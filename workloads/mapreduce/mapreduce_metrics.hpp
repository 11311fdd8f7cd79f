// Job completion times, traffic by topology level, locality and utilisation of a MapReduce run.
#pragma once

#include "base/statistics.hpp"

#include "core/run_metrics.hpp"
#include "models/dataflow/topology_cost.hpp"
#include "workloads/mapreduce/mapreduce_sim.hpp"

namespace cs {

/** Metrics: jobs, mean_jct_s, p50_jct_s, p95_jct_s, makespan_s; traffic_cost (bytes x level weight of map reads
 *  and shuffle: what a scheduler controls), communication_cost (the same bytes x policy-compliant hops),
 *  network_bytes and bytes_{host,rack,pod,core} (every transfer by the level it crosses), mean_shuffle_flow_s
 *  (network time per map-output segment: a fetch moves every ready segment of one host in one flow, so its time
 *  is shared by its segments, as if they were sent one after another), map_locality_{node,rack,off_rack} (shares of
 * first attempts), utilization (container-seconds busy / containers x makespan). Breakdown: bytes by kind, attempts,
 * rounds, activities. */
RunMetrics mapreduce_metrics(const MapReduceOutcome& outcome, const TopologyCost& cost);

} // namespace cs
