// Results of a collective sweep: nccl-tests' table and CSV, and report metrics (time, algbw, busbw, bytes per tier).
#pragma once

#include "core/common_metrics.hpp"
#include "core/run_metrics.hpp"
#include "core/timeline.hpp"
#include "workloads/collective/collective_sweep.hpp"

#include <string>

namespace cs {
namespace metric {

CS_METRIC(collective_time_s, SECONDS, "time of the collective at the sweep's largest size");
CS_METRIC(message_bytes, BYTES, "the sweep's largest message size");
CS_METRIC(algbw_gbps, GBPS, "algorithm bandwidth at the largest size: bytes over time (nccl-tests' algbw)");
CS_METRIC(busbw_gbps, GBPS, "bus bandwidth at the largest size: algbw times the op's factor (nccl-tests' busbw)");
CS_METRIC(size_count, COUNT, "message sizes swept");

} // namespace metric

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
