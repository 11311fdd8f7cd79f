// Capacity planning for a GPU-cluster job trace: the cheapest cluster (GPU type, node count, NICs per node, fabric
// oversubscription) whose replay of the trace meets a JCT or queueing target.
#pragma once

#include "sim/plan/capacity.hpp"

#include <string>
#include <vector>

namespace cs {

struct JobCapacityCandidate {
  std::string device;
  int gpus = 0;
  int nics_per_node = 0;
  double oversubscription = 1;
  bool ran = false;
  std::string why; // when it did not run: what the scenario check said
  double usd_per_gpu_hour = 0;
  double mean_jct_s = 0, p95_jct_s = 0, mean_wait_s = 0, p95_wait_s = 0, makespan_s = 0, utilization = 0;
  double cost_usd = 0;                            // the cluster's hourly price over the replay's makespan
  bool meets_target = false, on_frontier = false; // frontier: no other run is both cheaper and has a lower mean JCT
  double metric(const std::string& name) const;
};

/** Whether `metric` is a job-trace target (mean_jct_hours, p95_jct_hours, mean_wait_hours, p95_wait_hours). */
bool is_job_capacity_metric(const std::string& metric);

/** Replays `base` (a gpu-jobs scenario) on every composition the options allow, in device, GPU count, NICs,
 *  oversubscription order, with the target and the frontier marked. InputError for a device without a price. */
std::vector<JobCapacityCandidate> plan_job_capacity(const Scenario& base, const CapacityOptions& options);

} // namespace cs
