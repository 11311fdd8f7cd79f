// Builds the jobs of a mapreduce scenario (from a trace or synthetic) and places their input blocks with HDFS's policy.
#pragma once

#include "models/dataflow/cluster_layout.hpp"
#include "traces/trace_job.hpp"
#include "workloads/mapreduce/job.hpp"
#include "workloads/mapreduce/mapreduce_params.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace cs {

struct MapReduceWorkload {
  std::vector<MapReduceJob> jobs; // by submission time; the first trace job in the window submits at 0
  std::optional<TraceSummary> trace;
  long outside_window = 0; // trace jobs read but not replayed (before start, after start + duration, over max_jobs)
};

/** Jobs of `params` on a cluster of `layout`. Trace paths are relative to `base_dir`; all randomness from `seed`.
 *  Throws InputError for an unreadable trace, std::invalid_argument when nothing is left to run. */
MapReduceWorkload build_mapreduce_workload(const MapReduceParams& params, const ClusterLayout& layout,
                                           const std::string& base_dir, std::uint64_t seed);

/** One trace job as cluster work (no block placement): map and reduce counts, sizes and compute times. */
MapReduceJob job_from_trace(const TraceJob& t, const MapReduceParams& params);

} // namespace cs
