// Results of a collective sweep: nccl-tests' table and CSV, and report metrics (time, algbw, busbw, bytes per tier).
#pragma once

#include "core/run_metrics.hpp"
#include "core/timeline.hpp"
#include "workloads/collective/collective_sweep.hpp"

#include <string>

namespace cs {

struct CollectiveRow {
  double bytes = 0, seconds = 0, algbw = 0, busbw = 0; // bandwidths in GB/s (1e9 B/s), as nccl-tests prints
  std::string algorithm, protocol;
};

std::vector<CollectiveRow> collective_rows(const CollectiveSweep& sweep, const Timeline& timeline,
                                           const std::string& op);
/** nccl-tests' column layout (size, count, type, redop, root, time us, algbw, busbw, #wrong) plus the algorithm. */
std::string nccl_tests_table(const std::vector<CollectiveRow>& rows, const std::string& op, int ranks);
std::string collective_csv(const std::vector<CollectiveRow>& rows);
/** Metrics of the largest size (collective_time_s, algbw_gbps, busbw_gbps) and bytes crossing each link tier. */
RunMetrics collective_metrics(const CollectiveSweep& sweep, const std::vector<CollectiveRow>& rows,
                              const PlatformSpec& platform);

} // namespace cs
