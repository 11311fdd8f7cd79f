// One Spark simulation's state: the cluster manager and executors (spark_executors.cpp), the drivers' jobs, stages
// and delay scheduling (spark_driver.cpp), the task actors (spark_tasks.cpp) and the DAG's view of block futures.
#pragma once

#include "models/dataflow/cluster_runtime.hpp"
#include "workloads/spark/spark_sim.hpp"

#include <map>
#include <random>

namespace cs {

struct ExecutorState {
  int id = 0, app = 0, host = 0, cores = 1;
  int busy = 0;
  double granted = 0;   // container granted (resources held from here)
  double ready = 0;     // registered with the driver
  bool alive = false;   // registered and not released
  bool leaving = false; // being released (migrating its cache): no new tasks
  bool released = false;
  double idle_since = 0;
  double window_busy = 0; // busy core-seconds since the window started (iSpark's iteration)
  double window_start = 0;
  double busy_since = 0; // for window accounting: when `busy` last changed
  double execution = 0;  // unified memory its running tasks use for shuffle sorting and aggregation
};

struct StageRun {
  int stage = 0;
  int run = 0;              // which submission (a task of an aborted run that ends later finds none)
  std::vector<int> attempt; // by partition: attempts launched (replayed failures come first)
  std::vector<int> pending; // partitions not launched
  int running = 0, done = 0, total = 0;
  double start = 0;
  int level = 0; // delay scheduling: the locality level currently allowed without waiting
  double last_launch = 0;
  std::vector<std::vector<int>> pref_exec, pref_host; // by partition
  std::vector<char> partition_done;
};

struct AppState {
  const SparkApplication* spec = nullptr;
  bool admitted = false, done = false;
  int next_job = 0;
  double job_ready_at = 0;    // when the last job ended (the driver's work before the next counts from here)
  double last_submit = 0;     // when the last job was submitted (a concurrent job's work counts from here)
  std::vector<int> open_jobs; // the jobs running (more than one when the driver submitted them concurrently)
  std::vector<char> stage_done;
  std::vector<StageRun> running;
  std::vector<int> executors; // ids
  int requested = 0;          // asked for, not granted
  double backlog_since = -1;
  bool iteration_ended = false;
  double next_decision = 0;               // the allocation manager looks every `tick`, and at each job's end
  std::vector<std::vector<int>> map_host; // per stage, per task: where its shuffle output was written
  std::vector<int> plan;                  // stages in the order they will run (BlockFuture)
  std::vector<std::vector<int>> readers;  // per RDD: plan positions of the stages that read it
  std::size_t position = 0;               // first plan position not finished
  std::vector<std::vector<char>> stage_partition_done; // per stage, per partition
  int runs = 0;                                        // stage submissions so far
};

class SparkRun : public BlockFuture {
public:
  SparkRun(ActorRuntime& runtime, const std::vector<SparkApplication>& apps, const SparkSetup& setup);
  SparkOutcome run();

  int references(const BlockId& block) const override;
  int distance(const BlockId& block) const override;

private:
  // spark_executors.cpp: the cluster manager and allocation.
  void master();
  void admit(double now);
  void grant(double now);
  int place_executor();
  void register_ready(double now);
  void provision(int a, double now);
  AppView view_of(int a, double now) const;
  void release_executor(int e, bool migrate);
  void finish_app(int a, double now);
  void give_back(ExecutorState& e, double now);
  void sample_cores(double now);
  void set_busy(ExecutorState& e, int delta, double now);
  double next_wake(double now) const;

  // spark_driver.cpp: jobs, stages and delay scheduling.
  void plan_app(int a);
  void advance_jobs(int a, double now);
  void submit_stage(int a, int s, double now);
  void schedule(int a, double now);
  int task_level(const StageRun& r, int p, const ExecutorState& e, const std::vector<char>& live_hosts) const;
  std::vector<char> live_hosts(int a) const;
  struct Launch {
    int app = 0, stage = 0, run = 0, partition = 0, executor = 0, level = 0, attempt = 0;
    double start = 0;
  };
  void on_task_end(const Launch& l, bool failed);
  double next_job_at(int a) const;
  void end_job(int a, int job, double now);
  void abort_jobs(int a, int stage, double now);
  const std::vector<int>& replicas(int a, int rdd, int p);

  // spark_tasks.cpp: a task's work.
  /** Runs attempt `attempt` of task `p`; false when it is a replayed attempt that failed. */
  bool run_task(int a, int s, int p, int e, int attempt);
  double execution_bytes(int a, int s) const;
  void use_execution_memory(int e, double delta);
  struct TaskWork {
    std::vector<ActivityPtr> io;
    double compute = 0;
    std::vector<std::pair<int, bool>> inserts; // (rdd, was a recompute of a block read before)
  };
  void resolve(int a, int rdd, int p, const ExecutorState& e, TaskWork& w);
  void read_shuffle(int a, int s_parent, int partitions, const ExecutorState& e, TaskWork& w);
  void read_input(int a, int rdd, int p, const ExecutorState& e, TaskWork& w);

  ActorRuntime& rt_;
  const std::vector<SparkApplication>& apps_;
  SparkSetup setup_;
  const SparkParams& p_;
  ClusterRuntime cluster_;
  std::mt19937_64 rng_;
  SignalPtr wake_;
  std::vector<AppState> state_;
  std::vector<ExecutorState> execs_;
  std::vector<int> free_cores_;
  std::vector<double> free_memory_;
  std::size_t next_app_ = 0;
  int next_worker_ = 0; // standalone's round-robin position
  int apps_done_ = 0;
  int busy_cores_ = 0, allocated_cores_ = 0;
  std::map<BlockId, char> computed_; // blocks computed at least once
  std::map<BlockId, std::vector<int>> replicas_;
  SparkOutcome out_;
};

} // namespace cs
