// The pictures `clustersim run --plots` adds to a run's outputs: the device timeline (Gantt), utilisation over time,
// the time breakdown, and for job workloads (MapReduce) the job-completion-time distribution.
#pragma once

#include "sim/run/scenario_run.hpp"

#include <string>
#include <utility>
#include <vector>

namespace cs {

/** Files (name, bytes): timeline, utilization (from the run's Chrome trace, when it has one), breakdown (from the
 *  report's *_s entries) and jct (from jobs.csv), each as .png and .svg. Throws std::runtime_error when gnuplot
 *  cannot draw them. */
std::vector<std::pair<std::string, std::string>> run_plots(const RunResult& result);

} // namespace cs
