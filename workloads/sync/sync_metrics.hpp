// The metrics and the summary of a sync-training run: throughput, updates, staleness, groups, idle time.
#pragma once

#include "core/run_metrics.hpp"
#include "workloads/sync/sync_world.hpp"

#include <string>

namespace cs {

/** report.json metrics of a run of `setup` that produced `record`. */
RunMetrics sync_metrics(const SyncRecord& record, const SyncSetup& setup);

/** The summary lines (after the header) for a run under `scheme`. */
std::string sync_summary(const RunMetrics& metrics, const SyncSetup& setup, const std::string& scheme,
                         int slow_devices);

/** workers.csv: per worker its host, compute and idle seconds. */
std::string workers_csv(const SyncRecord& record, const SyncSetup& setup);

} // namespace cs
