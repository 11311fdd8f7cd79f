// The GPU-cluster job simulation: arrivals and completions as events, the queue policy at every event, gang
// placement, and each job's run time scaled by its placement's iteration time.
#pragma once

#include "platform/platform_spec.hpp"
#include "policies/cluster/cluster_scheduling.hpp"
#include "traces/gpu_job_trace.hpp"

#include <functional>
#include <vector>

namespace cs {

struct GpuJobRecord {
  double submit = 0, start = -1, end = -1;
  int gpus = 1, gpu_milli = 1000;
  int nodes = 0, racks = 0; // spanned by its placement
  double slowdown = 1;      // its run time over the recorded one
};

struct GpuJobsOutcome {
  std::vector<GpuJobRecord> jobs;
  double makespan = 0;
  double gpu_seconds_busy = 0;       // GPU-seconds held (fractional jobs by their share)
  double fragmented_gpu_seconds = 0; // free GPU-seconds on nodes that also run jobs
  long long events = 0;
  int never_fit = 0; // jobs larger than the cluster (not queued)
};

/** A job's run time over its recorded one, from its placement (GPU indices). */
using PlacementSlowdown = std::function<double(const std::vector<int>& gpus)>;

/** Runs `jobs` (submission times from 0, any order) on `platform`'s GPUs. */
GpuJobsOutcome simulate_gpu_jobs(const std::vector<GpuTraceJob>& jobs, const PlatformSpec& platform, int gpus_per_node,
                                 JobScheduler& scheduler, const GangPlacement& placement,
                                 const PlacementSlowdown& slowdown);

} // namespace cs
