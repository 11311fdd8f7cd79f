// One MapReduce simulation's state and its actors: the ResourceManager (resource_manager.cpp) and the map and reduce
// attempts (task_attempts.cpp), on the cluster runtime.
#pragma once

#include "models/dataflow/cluster_runtime.hpp"
#include "workloads/mapreduce/mapreduce_sim.hpp"

#include <map>
#include <random>

namespace cs {

/** A job as the ResourceManager and its tasks see it while it runs. */
struct JobState {
  const MapReduceJob* spec = nullptr;
  bool active = false;
  bool done = false;
  std::vector<char> map_state;                 // 0 pending, 1 running, 2 done
  std::vector<int> map_output_host;            // where a done map's output lies
  std::vector<double> map_started;             // first attempt's start
  std::vector<char> speculated;                // a second attempt was requested
  std::vector<std::vector<ActorPtr>> attempts; // running attempts per map (to kill the loser)
  std::vector<std::vector<int>> maps_on_host;  // pending-map index by replica host (lazily cleaned)
  std::size_t pending_head = 0;                // maps below this index are not pending
  int maps_done = 0, maps_running = 0;
  int reduces_started = 0, reduces_running = 0, reduces_done = 0;
  std::vector<int> done_order; // maps in completion order (reducers fetch from it)
  std::map<int, double> output_on_host;
  std::vector<int> speculative_queue; // maps waiting for a second attempt
  std::vector<ActorPtr> waiting_reducers;
  double map_seconds_sum = 0;
  int map_seconds_n = 0;
  int running_containers = 0;
  int am_host = -1;     // where its MRAppMaster runs (-1: not placed yet, or no AM containers)
  double am_ready = -1; // when its tasks may be scheduled (-1: the AM is not placed yet)
  double finish = 0;
  std::vector<int> map_failures; // attempts of each map that failed so far
  struct Attempt {
    ActorPtr actor;
    int host;
  };
  std::map<std::size_t, Attempt> running; // by task record: the attempts to kill if the job fails
  bool failed = false;

  int pending_maps() const { return static_cast<int>(spec->maps.size()) - maps_done - maps_running; }
};

class MapReduceRun {
public:
  MapReduceRun(ActorRuntime& runtime, const std::vector<MapReduceJob>& jobs, const PlatformSpec& platform,
               const MapReduceParams& params, MapReduceScheduler& scheduler, const TopologyCost& cost,
               std::uint64_t seed, const StragglerModel* stragglers = nullptr);
  MapReduceOutcome run();

private:
  struct Candidate {
    int job;
    int task;
    bool map;
    bool speculative;
  };

  // The ResourceManager: admits jobs and holds one scheduling round per heartbeat.
  void resource_manager();
  void activate(int j);
  void request_speculation(double now);
  void round(double now);
  void place_application_masters(double now, int start);
  std::vector<Candidate> candidates(const SchedulingRound& r, int free_total);
  void add_map_candidates(int j, const SchedulingRound& r, int free_total, std::vector<Candidate>& out);
  std::vector<CandidateTask> describe(const std::vector<Candidate>& cands);

  // Containers and task attempts.
  void take_container(int j, int host);
  void release_container(int j, int host);
  void launch(const Candidate& c, int host);
  void hdfs_write(int job, int host, double bytes);
  void map_attempt(int j, int m, int host, bool speculative);
  void kill_attempt(int j, int m, const ActorPtr& actor);
  bool map_attempt_failed(int j, int m, int host, std::size_t record);
  bool reduce_attempts_failed(int j, int r, int host, std::size_t& record);
  void fail_job(int j);
  void reduce_task(int j, int r, int host);
  void fetch_map_outputs(int j, int host);
  void finish_job(int j);
  void close_job(int j);

  ActorRuntime& rt_;
  const std::vector<MapReduceJob>& jobs_;
  const MapReduceParams& p_;
  MapReduceScheduler& scheduler_;
  const TopologyCost& cost_;
  std::mt19937_64 rng_;
  const ClusterLayout& layout_;
  ClusterRuntime cluster_;
  int containers_per_host_ = 1;
  std::vector<int> free_;
  std::vector<JobState> state_;
  std::vector<int> active_; // FIFO: submission order
  std::vector<int> queue_running_;
  std::size_t jobs_done_ = 0;
  std::vector<long> mark_;
  long stamp_ = 0;
  MapReduceOutcome out_;
};

} // namespace cs
