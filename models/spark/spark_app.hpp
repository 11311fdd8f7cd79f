// A Spark application as the simulator runs it: RDDs with partitions and lineage, stages cut at shuffles, jobs.
#pragma once

#include <string>
#include <vector>

namespace cs {

/** Spark's persistence levels that matter to timing (replication and off-heap are not modelled). */
enum class StorageLevel { NONE, MEMORY_ONLY, MEMORY_AND_DISK, DISK_ONLY };

/** "MEMORY_ONLY" etc. (also Spark's event-log spelling "Memory Deserialized 1x Replicated" is read by the log
 *  reader, not here); throws std::invalid_argument for another name. */
StorageLevel storage_level_of(const std::string& name);
const char* storage_level_name(StorageLevel level);

/** One RDD. A partition is computed inside one task from its narrow parents (same partition index, same task), the
 *  shuffle output of earlier stages, or HDFS input, then `compute_s` of one core's work. */
struct Rdd {
  std::string name;
  int partitions = 1;
  double partition_bytes = 0; // size of one partition as cached (deserialized objects)
  double compute_s = 0;       // one core's seconds to compute a partition from its inputs
  double input_bytes = 0;     // per partition read from HDFS (a source RDD)
  std::vector<int> narrow_parents;
  std::vector<int> shuffle_stages; // stages whose shuffle output a partition reads (its share of each)
  StorageLevel storage = StorageLevel::NONE;
};

/** A stage: one task per partition of `rdd`. */
struct Stage {
  int rdd = 0;
  double shuffle_write_bytes = 0;   // per task (a shuffle map stage); 0 for a result stage
  double output_bytes = 0;          // per task written to HDFS (saveAsTextFile and the like)
  std::vector<double> task_seconds; // replay: recorded compute per task (overrides the RDDs' compute_s); may be empty
  int tasks = 0; // tasks over `tasks` partitions spread evenly over the RDD (an iterative step over the part of the
                 // data still active); 0 = every partition
  // Replay: per task, the recorded slot times of its attempts that failed, in order. Each holds a slot for its time
  // and sends the task back to the queue; empty when none failed.
  std::vector<std::vector<double>> failed_attempt_s;
  // Replay: per task, whether its last attempt failed too (Spark gave up): that failure aborts the stage and fails
  // its job, as the log recorded. Empty when every task succeeded.
  std::vector<char> gives_up;

  int task_count(const std::vector<Rdd>& rdds) const { return tasks > 0 ? tasks : rdds[rdd].partitions; }
  /** The partition task `j` computes. */
  int partition_of(int j, const std::vector<Rdd>& rdds) const
  {
    const long long n = rdds[rdd].partitions;
    return tasks > 0 ? static_cast<int>(j * n / tasks) : j;
  }
};

/** An action: the stages it needs, in an order where parents come first; the last one is the result stage. A stage
 *  whose shuffle output already exists is skipped, as Spark does. */
struct SparkJob {
  std::vector<int> stages;
  double driver_s = 0; // driver-side work before the job is submitted (collecting results, updating a model)
  // Replay: the driver submitted it while the previous job ran (from another thread): it runs beside it, and
  // driver_s counts from the previous job's submission instead of its end.
  bool with_previous = false;
};

struct SparkApplication {
  std::string name;
  double submit_s = 0;
  int max_executors = 1; // what a static allocation asks for (its peak demand); dynamic allocation's ceiling
  std::vector<Rdd> rdds;
  std::vector<Stage> stages;
  std::vector<SparkJob> jobs;
  double driver_tail_s = 0; // driver-side work after the last job until the application ends (replay: recorded)
  // Replay: seconds from the application's start until each of its executors registered, as recorded (sorted). The
  // k-th executor granted registers no earlier (the wait for containers the log saw); empty: the start-up delay only.
  std::vector<double> executor_waits_s;
  // Replay: the log's reads of persisted RDDs (a task of a later stage over a partition an earlier stage stored) and
  // how many came from memory. They are inside the recorded task times, so the simulated cache never sees them.
  long recorded_cache_reads = -1; // -1: not a replay
  long recorded_memory_reads = 0;
  std::vector<std::string> left_out; // what its source (an event log) held that the replay leaves out, one line each

  /** Stages `s` depends on through shuffles (the stages read by its RDDs' shuffle dependencies). */
  std::vector<int> parent_stages(int s) const;
  /** The RDDs computed by a task of stage `s`, each before the RDDs that use it (children after parents). */
  std::vector<int> rdds_of_stage(int s) const;
  /** Throws std::invalid_argument naming the first inconsistency (indices out of range, cycles, partition counts of
   *  narrow parents that differ, a job whose stages are out of order). */
  void validate() const;
};

} // namespace cs
