// What MapReduce trace formats (SWIM, Hadoop rumen, MRv2 .jhist) share: one job, before it is placed on a cluster.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cs {

/** One job as a trace records it. Sizes in bytes, times in seconds. */
struct TraceJob {
  std::string id;
  std::string name;
  std::string queue;
  std::string input_path; // the dataset it reads; jobs reading the same path share its HDFS blocks ("" = its own)
  double submit_s = 0;    // as the trace records it; the workload builder shifts the first job to 0
  double input_bytes = 0;
  double shuffle_bytes = 0;
  double output_bytes = 0;
  int maps = 0;                                    // 0 = derive from input_bytes and the HDFS block size
  int reduces = -1;                                // -1 = derive from shuffle_bytes
  std::vector<double> map_input_bytes;             // per map, when the trace has them
  std::vector<std::vector<std::string>> map_hosts; // preferred (replica) hosts per map, the trace's host names
  std::vector<double> map_seconds;                 // recorded run time per map (successful attempt), when known
  std::vector<double> reduce_seconds;              // recorded run time per reduce, when known
  // Failed attempts (job history files): per task, each attempt that failed, in order, and whether the task gave up
  // (its last attempt failed too, which fails the job). Empty when the trace has no per-task data.
  struct FailedAttempt {
    double run_s = 0;       // launch to failure
    double relaunch_s = -1; // failure to the next attempt's launch (-1: none followed)
  };
  std::vector<std::vector<FailedAttempt>> map_failed_attempts, reduce_failed_attempts;
  std::vector<char> map_gave_up, reduce_gave_up;
  bool failed = false;   // the job ended FAILED or KILLED
  double startup_s = -1; // recorded: submission to the first task attempt's start (AM start-up, setup), -1 unknown
  double commit_s = -1;  // recorded: the last task's end to the job's end (output commit, AM shut-down), -1 unknown
  int line = 0;          // where the job starts in its file
};

/** What a reader read and what it skipped, with the first problems as "file:line: message". */
struct TraceSummary {
  std::string file;
  std::string format;
  long jobs_read = 0;
  long skipped = 0;
  std::map<std::string, long> skip_reasons; // reason -> count (sorted, so output is deterministic)
  std::vector<std::string> problems;        // at most kMaxProblems

  static constexpr std::size_t kMaxProblems = 20;
  void skip(int line, const std::string& reason, const std::string& detail = "");
};

using TraceJobSink = std::function<void(TraceJob&&)>;

/** Bounds on what one trace job may hold (docs/mapreduce.md): past them a record is skipped and counted, since a job
 *  of 1e18 bytes or 2e9 maps would never finish simulating. */
inline constexpr double kMaxTraceJobBytes = 1125899906842624.0; // 1 PiB per job and field
inline constexpr double kMaxTraceTasks = 1e6;                   // maps or reduces per job
inline constexpr double kMaxTraceSeconds = 1e10;                // submit times (epoch seconds fit) and task times

/** Why `job` is past the bounds or holds a non-finite number, or "" when it is within them. */
std::string trace_job_out_of_bounds(const TraceJob& job);
/** A task count read as a double: true and `out` set when it is a whole number within [0, kMaxTraceTasks]. */
bool bounded_task_count(double value, int& out);

/** Streams the jobs of `path` in MapReduce trace format `format` (a registered format that feeds mapreduce: swim,
 *  rumen, jhist) into `sink`, in file order. Rows or records that cannot be used are skipped and counted. A file that
 *  cannot be opened, or whose framing is broken (not a rumen object stream, no Avro-Json header), throws InputError
 *  with file:line:col. */
TraceSummary read_trace(const std::string& format, const std::string& path, const TraceJobSink& sink);

/** What `clustersim trace` says of a MapReduce trace read with `read`: jobs read and skipped, bytes, problems. */
std::string mapreduce_trace_summary(const std::string& path,
                                    const std::function<TraceSummary(const std::string&, const TraceJobSink&)>& read);

TraceSummary read_swim(const std::string& path, const TraceJobSink& sink);
TraceSummary read_rumen(const std::string& path, const TraceJobSink& sink);
TraceSummary read_jhist(const std::string& path, const TraceJobSink& sink);

/** One line per summary: "file: N jobs read, M skipped (reason: k, ...)". */
std::string describe(const TraceSummary& s);

} // namespace cs
