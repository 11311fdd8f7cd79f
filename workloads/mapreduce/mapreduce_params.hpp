// What a MapReduce workload reads from `workload.mapreduce:`: jobs (trace or synthetic), HDFS, YARN and shuffle.
#pragma once

#include "base/yaml_reader.hpp"

#include <string>
#include <vector>

namespace cs {

/** A MapReduce workload read from a production trace. */
struct MapReduceTraceParams {
  std::string format = "swim"; // swim | rumen | jhist
  std::string file;            // relative to the scenario file
  Seconds start;               // replay jobs submitted in [start, start + duration)
  Seconds duration;            // 0 = to the end of the trace
  double scale = 1.0;          // multiplies every byte count (SWIM: ratio of cluster sizes)
  int max_jobs = 0;            // 0 = no limit
};

/** Synthetic MapReduce jobs: Poisson arrivals, log-uniform input sizes. */
struct SyntheticJobsParams {
  int jobs = 0;
  Seconds mean_interarrival{10};
  Bytes min_input{1073741824.0};
  Bytes max_input{10.0 * 1073741824.0};
  double shuffle_ratio = 1.0; // shuffle bytes / input bytes
  double output_ratio = 0.1;  // output bytes / shuffle bytes (or / input when there is no shuffle)
};

struct QueueParams {
  std::string name = "default";
  double capacity = 1.0; // share of the cluster's containers
};

struct MapReduceParams {
  MapReduceTraceParams trace;
  SyntheticJobsParams synthetic;
  Bytes block_size{134217728.0};
  int replication = 3;
  int writer_racks = 0;        // 0: input written from outside the cluster; k: each dataset written from k racks
  int containers_per_host = 0; // 0 = the host's cores
  Bytes reduce_bytes_per_task{1073741824.0};
  int max_reduces = 999;
  double slowstart = 0.05;          // mapreduce.job.reduce.slowstart.completedmaps
  double reduce_rampup_limit = 0.5; // share of a job's containers reducers may hold while maps are pending
  Seconds heartbeat{1};
  int parallel_copies = 5; // mapreduce.reduce.shuffle.parallelcopies
  Rate map_rate{100e6};    // bytes/s one container's map function processes
  Rate reduce_rate{100e6};
  bool am_container = false;      // each job's MRAppMaster holds one container from its start to the job's end
  Seconds am_startup;             // from the AM's container to the job's first task (the trace's, when recorded)
  Seconds job_commit;             // from the last task's end to the job's end (the trace's, when recorded)
  bool recorded_overheads = true; // traces: use each job's recorded start-up and commit times where they exist
  bool speculative = false;
  double speculative_slowdown = 1.5;           // a running map this many times slower than its job's mean gets a copy
  double slow_host_fraction = 0;               // share of hosts that compute slowly (stragglers)
  double slow_host_factor = 3;                 // how much slower
  std::vector<double> level_costs{0, 1, 2, 4}; // c0..c3: same host, rack, pod, core
  std::vector<QueueParams> queues{QueueParams{}};
  std::vector<std::string> middleboxes; // switches every inter-rack flow must traverse, in order (PAT's policy)
};

/** Reads `workload.mapreduce:`; `selected` when this is the scenario's workload (then it must have jobs). */
void read_mapreduce(ObjectReader r, MapReduceParams& m, bool selected);

} // namespace cs
