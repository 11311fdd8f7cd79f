// Job completion times, traffic by topology level, locality and utilisation of a MapReduce run.
#pragma once

#include "base/statistics.hpp"

#include "core/common_metrics.hpp"
#include "core/run_metrics.hpp"
#include "models/dataflow/topology_cost.hpp"
#include "workloads/mapreduce/mapreduce_sim.hpp"

namespace cs {
namespace metric {

CS_METRIC(traffic_cost, COST, "bytes of map reads and shuffle times the weight of the topology level they cross");
CS_METRIC(communication_cost, COST, "the same bytes times the policy-compliant hops between their hosts");
CS_METRIC(bytes_host, BYTES, "bytes moved within a host");
CS_METRIC(bytes_rack, BYTES, "bytes moved between hosts of one rack");
CS_METRIC(bytes_pod, BYTES, "bytes moved between racks of one pod");
CS_METRIC(bytes_core, BYTES, "bytes moved across the core");
CS_METRIC(mean_shuffle_flow_s, SECONDS, "network time per map-output segment fetched over the network");
CS_METRIC(map_locality_node, FRACTION, "share of first map attempts that read their split on their own host");
CS_METRIC(map_locality_rack, FRACTION, "share of first map attempts that read their split within their rack");
CS_METRIC(map_locality_off_rack, FRACTION, "share of first map attempts that read their split off their rack");
CS_METRIC(utilization, FRACTION, "container-seconds busy over containers times makespan");

} // namespace metric

/** Metrics: jobs, mean_jct_s, p50_jct_s, p95_jct_s, makespan_s; traffic_cost (bytes x level weight of map reads
 *  and shuffle: what a scheduler controls), communication_cost (the same bytes x policy-compliant hops),
 *  network_bytes and bytes_{host,rack,pod,core} (every transfer by the level it crosses), mean_shuffle_flow_s
 *  (network time per map-output segment: a fetch moves every ready segment of one host in one flow, so its time
 *  is shared by its segments, as if they were sent one after another), map_locality_{node,rack,off_rack} (shares of
 * first attempts), utilization (container-seconds busy / containers x makespan). Breakdown: bytes by kind, attempts,
 * rounds, activities. */
RunMetrics mapreduce_metrics(const MapReduceOutcome& outcome, const TopologyCost& cost);

} // namespace cs
