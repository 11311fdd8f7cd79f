// Runs Spark applications on the actor runtime: a master actor holds the cluster manager, every application's
// driver (jobs, stages, delay scheduling) and its allocation manager; tasks are actors on their executors' hosts that
// read, fetch, compute, cache and shuffle through the platform.
#pragma once

#include "core/actor_runtime.hpp"
#include "models/dataflow/cluster_layout.hpp"
#include "models/spark/spark_app.hpp"
#include "models/spark/spark_cache.hpp"
#include "models/spark/spark_provisioning.hpp"
#include "platform/platform_spec.hpp"
#include "platform/stragglers.hpp"
#include "workloads/spark/spark_params.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cs {

struct SparkAppRecord {
  double submit = 0, first_executor = -1, finish = 0;
  int executors_added = 0, executors_removed = 0, peak_executors = 0;
  double busy_core_s = 0;      // task time
  double allocated_core_s = 0; // executors' cores x their lifetimes
};

struct SparkTaskRecord {
  int app = 0, stage = 0, partition = 0, executor = 0, host = 0;
  int locality = 0; // 0 process-local (or no preference), 1 node-local, 2 any
  double start = 0, end = 0;
  bool failed = false; // a replayed attempt that failed (its task ran again, or its job failed)
};

struct SparkStageRecord {
  int app = 0, stage = 0, tasks = 0;
  double start = 0, end = 0;
  bool aborted = false; // a task gave up (replay): the stage ended there and its job failed
};

struct SparkCacheStats {
  long reads = 0;       // lookups of blocks computed before (first computations are not reads)
  long memory_hits = 0; // found in an executor's memory or a host pool
  long local_hits = 0;  // of which in the reading executor's own memory
  long host_hits = 0;   // of which in a co-hosted pool copy
  long remote_hits = 0; // of which fetched from another host
  long disk_hits = 0;
  long recomputed = 0; // reads that missed and recomputed from lineage
  double bytes_recomputed = 0, bytes_fetched_remote = 0, bytes_migrated = 0;
  long evictions = 0;
  long blocks_lost = 0; // dropped with a released executor
};

/** A sample of the cluster's cores: in use by tasks, and held by executors. */
struct CoreSample {
  double t = 0;
  int busy = 0, allocated = 0;
};

struct SparkOutcome {
  std::vector<SparkAppRecord> apps;
  std::vector<SparkStageRecord> stages;
  std::vector<SparkTaskRecord> tasks;
  std::vector<CoreSample> cores;
  SparkCacheStats cache;
  int cluster_cores = 0;
  double makespan = 0;
  long activities = 0;
  long failed_attempts = 0; // replayed task attempts that failed
  int failed_jobs = 0;      // jobs a task's last failure aborted (replay)
};

struct SparkSetup {
  const PlatformSpec* platform = nullptr;
  const ClusterLayout* layout = nullptr;
  const SparkParams* params = nullptr;
  SparkCache* cache = nullptr;
  SparkProvisioning* provisioning = nullptr;
  const StragglerModel* stragglers = nullptr;
  std::uint64_t seed = 1;
};

/** Simulates `apps` (sorted by submission) to completion; `runtime` runs once per process. Throws
 *  std::invalid_argument when an executor fits on no host. */
SparkOutcome simulate_spark(ActorRuntime& runtime, const std::vector<SparkApplication>& apps, const SparkSetup& setup);

/** Storage memory of one executor: the unified region (heap - reserved) x memory.fraction, all of which storage may
 *  use while execution does not. */
double executor_storage_bytes(const SparkParams& p);
/** What YARN reserves for an executor: heap plus max(384 MiB, 10%) overhead. */
double executor_container_bytes(const SparkParams& p);

} // namespace cs
