// MapReduce jobs placed on a cluster: maps with their HDFS block replicas, reducers, shuffle and output sizes.
#pragma once

#include <string>
#include <vector>

namespace cs {

struct MapTaskSpec {
  double input_bytes = 0;
  std::vector<int> replicas; // hosts holding the block
  double compute_s = 0;      // on one container of a normal-speed host
  std::vector<double>
      failed_attempts_s;          // recorded attempts that failed first, each its run time (a replay redoes them)
  std::vector<double> relaunch_s; // per failed attempt: the recorded wait before the next one launched (or 0)
  bool gives_up = false;          // its last attempt fails too: the job fails when it does
};

struct MapReduceJob {
  std::string id;
  std::string name;
  int queue = 0;       // index into the scenario's queues
  double submit_s = 0; // from the start of the run
  std::vector<MapTaskSpec> maps;
  int reduces = 0;
  double shuffle_bytes = 0; // all map output; each reducer gets 1/reduces of every map's share
  double output_bytes = 0;  // written by the reducers (or the maps of a map-only job) with HDFS replication
  std::vector<double> reduce_compute_s;
  std::vector<std::vector<double>> reduce_failed_attempts_s; // per reducer, as for maps (empty: none failed)
  std::vector<char> reduce_gives_up;
  double input_bytes = 0;
  double startup_s = 0; // from submission (with an AM container) to the first task: the AM's start-up and setup
  double commit_s = 0;  // from the last task's end to the job's end: output commit, the AM's shut-down

  /** What map m writes for the shuffle (in proportion to its input). */
  double map_output_bytes(int m) const
  {
    if (reduces == 0 || maps.empty())
      return 0;
    if (input_bytes <= 0) // a job that reads nothing (a generator): its maps share the shuffle evenly
      return shuffle_bytes / double(maps.size());
    return shuffle_bytes * maps[m].input_bytes / input_bytes;
  }
};

} // namespace cs
