// Metrics, tables and the summary of a Spark run.
#pragma once

#include "core/common_metrics.hpp"
#include "core/run_metrics.hpp"
#include "workloads/spark/spark_sim.hpp"

#include <string>

namespace cs {
namespace metric {

CS_METRIC(applications, COUNT, "Spark applications that completed");
CS_METRIC(cluster_utilization, FRACTION, "task core-seconds over the cluster's cores times makespan");
CS_METRIC(executor_utilization, FRACTION, "task core-seconds over the core-seconds executors held");
CS_METRIC(allocated_share, FRACTION, "executor core-seconds held over the cluster's cores times makespan");
CS_METRIC(executors_added, COUNT, "executors started, all applications");
CS_METRIC(executors_removed, COUNT, "executors released before their application ended");
CS_METRIC(cache_reads, COUNT, "reads of cached RDD blocks");
CS_METRIC(cache_hit_rate, FRACTION, "cached-block reads served from executor memory");
CS_METRIC(cache_disk_hit_rate, FRACTION, "cached-block reads served from disk");
CS_METRIC(bytes_recomputed, BYTES, "bytes of lost or evicted blocks recomputed from lineage");
CS_METRIC(bytes_fetched_remote, BYTES, "cached bytes read from another host");
CS_METRIC(bytes_migrated, BYTES, "cached bytes moved between executors (shared-cache migration)");
CS_METRIC(cache_evictions, COUNT, "cached blocks evicted");
CS_METRIC(blocks_lost, COUNT, "cached blocks lost with a removed executor");
CS_METRIC(tasks, COUNT, "tasks run (the attempts that succeeded)");
CS_METRIC(failed_task_attempts, COUNT, "replayed task attempts that failed (their tasks ran again or gave up)");
CS_METRIC(failed_jobs, COUNT, "jobs a task's last failure aborted (replayed from an event log)");
CS_METRIC(stages, COUNT, "stages run");
CS_METRIC(locality_process, FRACTION, "share of tasks run PROCESS_LOCAL");
CS_METRIC(locality_node, FRACTION, "share of tasks run NODE_LOCAL");
CS_METRIC(locality_any, FRACTION, "share of tasks run with no locality (ANY)");

} // namespace metric

RunMetrics spark_metrics(const SparkOutcome& outcome);
/** apps.csv: one row per application (submission, start, finish, JCT, executors, core-seconds). */
std::string spark_apps_csv(const std::vector<SparkApplication>& apps, const SparkOutcome& outcome);
/** stages.csv: one row per stage run (application, stage, tasks, start, end, duration). */
std::string spark_stages_csv(const std::vector<SparkApplication>& apps, const SparkOutcome& outcome);
/** utilisation.csv: cores in use by tasks and held by executors over time (a step function). */
std::string spark_cores_csv(const SparkOutcome& outcome);
/** Chrome trace: one process per host, one thread per executor. */
std::string spark_trace_json(const std::vector<SparkApplication>& apps, const SparkOutcome& outcome,
                             const std::vector<std::string>& host_names);

} // namespace cs
