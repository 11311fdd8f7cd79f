// Metrics, tables and the summary of a Spark run.
#pragma once

#include "core/run_metrics.hpp"
#include "workloads/spark/spark_sim.hpp"

#include <string>

namespace cs {

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
