// Runs MapReduce jobs on the actor runtime: a ResourceManager actor schedules each heartbeat; map, reduce and HDFS
// work are actors doing disk I/O, computation and network flows on the platform.
#pragma once

#include "core/actor_runtime.hpp"
#include "models/dataflow/topology_cost.hpp"
#include "platform/platform_spec.hpp"
#include "platform/stragglers.hpp"
#include "policies/mapreduce/task_scheduler.hpp"
#include "workloads/mapreduce/job.hpp"
#include "workloads/mapreduce/mapreduce_params.hpp"

#include <cstdint>
#include <vector>

namespace cs {

enum class TransferKind { MAP_READ, SHUFFLE, OUTPUT };

struct TransferRecord {
  TransferKind kind;
  int job = 0;
  int src = 0, dst = 0; // hosts; src == dst is a local disk read
  double bytes = 0;
  double start = 0, end = 0;
  int segments = 1; // shuffle: map outputs fetched in this one flow (a fetch takes every ready output of a host)
};

struct TaskRecord {
  int job = 0;
  bool map = true;
  int index = 0;
  int host = 0;
  int locality = -1; // maps: level of the replica read (0 node, 1 rack, 2 pod, 3 core)
  double start = 0, end = 0;
  bool speculative = false; // a second attempt
  bool killed = false;      // lost the race to another attempt, or its job failed
  bool failed = false;      // a recorded failure, redone: the task runs again (or gives up)
};

struct JobRecord {
  double submit = 0, finish = 0;
  int maps = 0, reduces = 0;
  bool failed = false; // a task gave up: the job ended when it did
};

struct MapReduceOutcome {
  std::vector<JobRecord> jobs;
  std::vector<TaskRecord> tasks;
  std::vector<TransferRecord> transfers;
  int containers = 0;
  double makespan = 0;
  long rounds = 0;     // scheduling rounds held
  long activities = 0; // SimGrid activities started (disk I/O, executions, flows)
};

/** Simulates `jobs` to completion under `scheduler` on `runtime` (which runs once per process). */
MapReduceOutcome simulate_mapreduce(ActorRuntime& runtime, const std::vector<MapReduceJob>& jobs,
                                    const PlatformSpec& platform, const MapReduceParams& params,
                                    MapReduceScheduler& scheduler, const TopologyCost& cost, std::uint64_t seed,
                                    const StragglerModel* stragglers = nullptr);

} // namespace cs
