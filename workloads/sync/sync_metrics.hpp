// The metrics and the summary of a sync-training run: throughput, updates, staleness, groups, idle time.
#pragma once

#include "core/common_metrics.hpp"
#include "core/run_metrics.hpp"
#include "workloads/sync/sync_world.hpp"

#include <string>

namespace cs {
namespace metric {

CS_METRIC(samples_per_s, PER_SECOND, "samples computed per second, every worker together");
CS_METRIC(updates, COUNT, "gradient contributions applied to the model");
CS_METRIC(updates_per_s, PER_SECOND, "updates per second");
CS_METRIC(effective_updates, COUNT, "updates discounted by staleness (a convergence proxy, not accuracy)");
CS_METRIC(effective_updates_per_s, PER_SECOND, "effective updates per second");
CS_METRIC(mean_group_size, COUNT, "mean workers combined per update");
CS_METRIC(p99_group_size, COUNT, "99th percentile of workers combined per update");
CS_METRIC(mean_staleness, COUNT, "mean steps a contribution lags the model it updates");
CS_METRIC(p99_staleness, COUNT, "99th percentile of staleness, in steps");
CS_METRIC(max_staleness, COUNT, "largest staleness, in steps");
CS_METRIC(mean_idle_fraction, FRACTION, "mean share of the run a worker is not computing");
CS_METRIC(max_idle_fraction, FRACTION, "largest share of the run a worker is not computing");
CS_METRIC(time_to_target_updates_s, SECONDS, "time to reach workload.target_updates (-1: not reached)");
CS_METRIC(max_clock_gap, COUNT, "ps-ssp: the largest lead in steps of a worker over the slowest at a step's start");

} // namespace metric

/** report.json metrics of a run of `setup` that produced `record`. */
RunMetrics sync_metrics(const SyncRecord& record, const SyncSetup& setup);

/** The summary lines (after the header) for a run under `scheme`. */
std::string sync_summary(const RunMetrics& metrics, const SyncSetup& setup, const std::string& scheme,
                         int slow_devices);

/** workers.csv: per worker its host, compute and idle seconds. */
std::string workers_csv(const SyncRecord& record, const SyncSetup& setup);

} // namespace cs
