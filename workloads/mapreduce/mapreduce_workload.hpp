// Builds the jobs of a mapreduce scenario (from a trace or synthetic) and places their input blocks with HDFS's policy.
#pragma once

#include <stdexcept>

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

/** The most map and reduce tasks one run holds (a run of 45,000 tasks takes about 2.5 s on the dev machine). */
constexpr long kMaxMapReduceTasks = 1000000;

/** More tasks than kMaxMapReduceTasks: refused before any job is built. */
struct TaskBoundError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/** Maps a trace job becomes: its recorded maps, or one per block of its (scaled) input. */
double map_count(const TraceJob& t, const MapReduceParams& params);

/** Jobs of `params` on a cluster of `layout`. Trace paths are relative to `base_dir`; all randomness from `seed`.
 *  Throws InputError for an unreadable trace, std::invalid_argument when nothing is left to run, TaskBoundError
 *  past kMaxMapReduceTasks. */
MapReduceWorkload build_mapreduce_workload(const MapReduceParams& params, const ClusterLayout& layout,
                                           const std::string& base_dir, std::uint64_t seed);

/** SimGrid solves every shuffle flow (a map's output to each reducer) with the others in flight: past 200,000 tasks
 *  and flows a run takes minutes there and seconds on the analytical backend. The warning to give before such a
 *  run on simgrid starts, or "" for a smaller one. */
std::string simgrid_duration_warning(const MapReduceWorkload& workload);

/** One trace job as cluster work (no block placement): map and reduce counts, sizes and compute times. */
MapReduceJob job_from_trace(const TraceJob& t, const MapReduceParams& params);

} // namespace cs
