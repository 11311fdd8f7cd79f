// Metrics that several workload kinds report with the same meaning: a step's time, the run's span, its traffic,
// its jobs' completion times.
#pragma once

#include "core/metric.hpp"

namespace cs::metric {

CS_METRIC(iteration_time_s, SECONDS,
          "time of one training step (mean spacing of step ends; replays: the replayed step)");
CS_METRIC(makespan_s, SECONDS, "simulated time from the first event to the last");
CS_METRIC(network_bytes, BYTES, "bytes that crossed the network between hosts (per iteration for training)");
CS_METRIC(task_count, COUNT, "tasks in the simulated task graph");
CS_METRIC(jobs, COUNT, "jobs that completed");
CS_METRIC(mean_jct_s, SECONDS, "mean job completion time (submission to finish)");
CS_METRIC(p50_jct_s, SECONDS, "median job completion time");
CS_METRIC(p95_jct_s, SECONDS, "95th percentile of job completion time");

} // namespace cs::metric
