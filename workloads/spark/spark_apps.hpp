// Spark applications a scenario asks for: HiBench-like generators (kmeans, pagerank, lr, wordcount, terasort) sized
// by HiBench's scale profiles, and applications rebuilt from a Spark event log for replay.
#pragma once

#include "models/spark/spark_app.hpp"
#include "traces/spark_event_log.hpp"
#include "workloads/spark/spark_params.hpp"

#include <vector>

namespace cs {

/** One application of a generator entry. Throws std::invalid_argument for a workload it does not know. */
SparkApplication hibench_application(const SparkAppParams& a, const SparkParams& p);

/** The application a Spark event log recorded: its stages with their tasks' recorded times (launch to finish less
 *  shuffle-fetch wait and shuffle-write time, which the simulator models), their failed attempts and the failures
 *  that aborted a job, input, shuffle and output bytes per task, the jobs in order with the driver's time before,
 *  between and after them. `executors` is what the log's peak executor count becomes (0 = it); `executor_waits`
 *  keeps the recorded registration times of the executors (their wait for containers). */
SparkApplication application_from_log(const SparkEventLog& log, int executors, bool executor_waits = true);

/** Every application of `p`, submission-ordered (event logs read relative to `base_dir`). */
std::vector<SparkApplication> spark_applications(const SparkParams& p, const std::string& base_dir);

} // namespace cs
