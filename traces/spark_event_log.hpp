// Reads a Spark event log (JSON lines, as the history server reads it: one file, or a rolling-log directory of
// events_N_* files) into applications, jobs, stages, tasks, RDDs and the executor timeline.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cs {

struct SparkLogRdd {
  int id = 0;
  std::string name;
  std::vector<int> parents;
  bool use_memory = false, use_disk = false;
  int partitions = 0;
};

struct SparkLogStage {
  int id = 0;
  int attempt = 0;
  std::string name;
  int tasks = 0;
  std::vector<SparkLogRdd> rdds;         // as the stage's RDD Info lists them (the stage's own RDD first in Spark 2+)
  std::vector<int> parents;              // parent stage ids (Spark 1.4+)
  double submit_s = -1, complete_s = -1; // seconds from the application's start (-1: not recorded)
  bool failed = false;
};

struct SparkLogTask {
  int stage = 0, stage_attempt = 0, index = 0, attempt = 0;
  std::string executor, host, locality;
  double launch_s = 0, finish_s = 0;
  bool failed = false, killed = false, speculative = false;
  std::string end_reason;   // Task End Reason (Success, ExceptionFailure, FetchFailed, TaskKilled, ...)
  double run_s = 0;         // Executor Run Time
  double deserialize_s = 0; // Executor Deserialize Time
  double input_bytes = 0;
  std::string read_method; // Input Metrics' Data Read Method (Memory = a cache hit; Hadoop, Disk, Network)
  double shuffle_remote_bytes = 0, shuffle_local_bytes = 0;
  long shuffle_blocks = 0; // shuffle blocks fetched, local and remote (Spark 1.2 records no local bytes)
  double fetch_wait_s = 0;
  double shuffle_write_bytes = 0, shuffle_write_s = 0;
  double output_bytes = 0;
  int blocks_cached = 0; // Updated Blocks with memory or disk size (RDD blocks stored by this task)
};

struct SparkLogJob {
  int id = 0;
  std::vector<int> stages;
  double submit_s = -1, end_s = -1; // -1: not recorded (Spark 1.2 records neither; read_spark_event_log then takes
                                    // them from the job's stages)
  bool ended = false;               // a JobEnd event was read
  bool failed = false;              // its Job Result is not JobSucceeded
};

struct SparkLogExecutor {
  std::string id, host;
  int cores = 1;
  double added_s = 0, removed_s = -1;
  std::string removed_reason;
};

struct SparkEventLog {
  std::string path;
  std::string app_name, app_id, spark_version;
  double start_ms = 0; // application start, epoch milliseconds (every *_s field is relative to it)
  double end_s = -1;
  std::vector<SparkLogJob> jobs;
  std::vector<SparkLogStage> stages; // completed stage attempts, in completion order
  std::vector<SparkLogTask> tasks;
  std::vector<SparkLogExecutor> executors;
  long lines = 0;
  long unknown_events = 0; // lines of an event type the reader does not use (SQL, environment, ...), skipped
  std::map<std::string, long> unknown_by_type;
};

/** Reads `path` (a file, optionally gzip-compressed, or a rolling event-log directory). InputError `file:line:col`
 *  for a line that is not JSON, an event without "Event", or a used field of the wrong type; a log with no
 *  application start or no task is InputError too. Unknown events are skipped and counted. */
SparkEventLog read_spark_event_log(const std::string& path);

/** A human-readable summary for `clustersim trace LOG --format spark`. */
std::string describe(const SparkEventLog& log);

} // namespace cs
