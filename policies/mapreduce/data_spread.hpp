// Where a task's input lies, summed per host, rack and pod, so its cost at any host is O(1) (reducers read from
// hundreds of hosts; schedulers price them on hundreds of hosts each round).
#pragma once

#include "policies/mapreduce/task_scheduler.hpp"

#include <map>
#include <vector>

namespace cs {

class DataSpread {
public:
  DataSpread(const CandidateTask& t, const TopologyCost& cost);
  /** placement_cost(t, h): level-weighted bytes moved to run the task on h. */
  double cost_at(int h) const;
  /** policy_cost(t, h): bytes x hops of policy-compliant paths. */
  double policy_cost_at(int h) const;
  /** Bytes of the task's input already on h (a map: its split when h holds a replica). */
  double bytes_at(int h) const;
  /** Bytes of the task's input in h's rack. */
  double rack_bytes(int rack) const { return rack_[rack]; }

private:
  const CandidateTask* task_;
  const TopologyCost* cost_;
  std::vector<double> host_, rack_, pod_;
  double total_ = 0;
};

/** Per job in a round: its reducers' shared data spread (reducers of one job read the same hosts) and the bytes
 *  of its data per rack (replicas of its candidate maps, or its reducers' sources). */
struct RoundJobData {
  std::map<int, DataSpread> reduce_spread;
  std::map<int, std::vector<double>> rack_bytes;
};
RoundJobData round_job_data(const SchedulingRound& round, const TopologyCost& cost);

} // namespace cs
