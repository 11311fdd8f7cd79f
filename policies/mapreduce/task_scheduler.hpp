// The MapReduce task-scheduler policy interface: each heartbeat round, place pending tasks on free containers.
#pragma once

#include "base/registry.hpp"
#include "models/dataflow/topology_cost.hpp"

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace cs {

/** A task waiting for a container, with where its input lies. */
struct CandidateTask {
  int job = 0;
  int task = 0; // map index, or reduce index
  bool map = true;
  int queue = 0;
  double submit_s = 0;
  double bytes = 0;               // what it reads: the split (map) or its estimated partition (reduce)
  std::vector<int> data_hosts;    // map: replica hosts; reduce: hosts holding (or expected to hold) map output
  std::vector<double> data_bytes; // map: unused (any one replica is read); reduce: estimated bytes from each host
  int pending_maps_of_job = 0;    // capacity scheduler: the job's outstanding map requests (its C in L*C/N)
};

struct HostOffer {
  int host = 0;
  int free = 0; // free containers
};

struct QueueState {
  double capacity = 1; // guaranteed share
  int running = 0;     // containers in use
};

/** One scheduling round: every host with free containers heartbeats once, in `offers` order. */
struct SchedulingRound {
  double now = 0;
  std::vector<CandidateTask> tasks; // FIFO order: job submission, then maps before reduces, then task index
  std::vector<HostOffer> offers;
  std::vector<QueueState> queues;
  int total_containers = 0;
};

struct TaskPlacement {
  int task = 0; // index into SchedulingRound::tasks
  int host = 0;
};

/** Fixed for a run: the topology's costs and the seeded generator. */
struct SchedulerContext {
  const TopologyCost* cost = nullptr;
  std::mt19937_64* rng = nullptr;
};

/** A scheduler policy; its parameters (if any) are read by `configure` from `policies.mapreduce: {name: ..., ...}`. */
class MapReduceScheduler : public Configurable {
public:
  virtual ~MapReduceScheduler() = default;
  /** Placements for this round; each task at most once, each host at most its free containers. Tasks left out
   *  stay pending. A policy may keep state between rounds (delay scheduling counts missed opportunities). */
  virtual std::vector<TaskPlacement> schedule(const SchedulingRound& round, const SchedulerContext& context) = 0;
};

/** Transmission cost of running `t` on `host` under the level weights (TAA): a map reads its nearest replica; a
 *  reduce pulls its estimated partition from every host. */
double placement_cost(const CandidateTask& t, int host, const TopologyCost& cost);
/** The same in bytes x hops of the policy-compliant path (PAT). */
double policy_cost(const CandidateTask& t, int host, const TopologyCost& cost);
/** 0 node-local, 1 rack-local, 2 pod, 3 off-pod: the level of the nearest replica (maps). */
int map_locality(const CandidateTask& t, int host, const TopologyCost& cost);

} // namespace cs
