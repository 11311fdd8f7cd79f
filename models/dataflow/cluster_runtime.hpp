// What actor-driven analytics workloads (MapReduce, Spark) do on a cluster's hosts through the actor runtime:
// compute (slower on straggler hosts), disk I/O, network flows, and HDFS writes through the replication pipeline.
#pragma once

#include "core/actor_runtime.hpp"
#include "models/dataflow/cluster_layout.hpp"
#include "platform/stragglers.hpp"

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace cs {

class ClusterRuntime {
public:
  /** `slowdown[h]` multiplies every computation on host h (1 = full speed); `stragglers` (cluster.stragglers, may be
   *  null) divides it by the host's speed and adds its seeded slowdown before each computation on that host. */
  ClusterRuntime(ActorRuntime& actors, const ClusterLayout& layout, std::vector<double> slowdown,
                 const StragglerModel* stragglers = nullptr);

  ActorRuntime& actors() { return rt_; }
  /** Work below a byte or a nanosecond is skipped: SimGrid can leave such activities pending forever. */
  static constexpr double kShortest = 1e-9;
  static bool some(double bytes) { return bytes >= 1; }

  ActivityPtr disk_io(int host, double bytes, bool write);
  ActivityPtr flow(int src, int dst, double bytes);
  /** Starts reading `bytes` from `src`'s disk for `dst`: the disk read (when `src` has a disk) and, when `dst` is
   *  another host, the flow, both appended to `started`. Nothing below a byte. */
  void read_from(int src, int dst, double bytes, std::vector<ActivityPtr>& started);
  /** `seconds` of work at full speed on `host`, from an actor on that host (skipped below kShortest). */
  void compute(int host, double seconds);
  /** Writes `bytes` to HDFS from `host`: every replica's disk and the pipeline's flows at once, replicas placed by
   *  HDFS's rack-aware policy. `on_flow(src, dst)` is told of each pipeline flow before the write waits. */
  void hdfs_write(int host, double bytes, int replication, std::mt19937_64& rng,
                  const std::function<void(int, int)>& on_flow);
  /** Activities started so far (disk operations, flows, computations). */
  long activities() const { return activities_; }

  /** Per host: `factor` on a seeded `fraction` of the hosts (stragglers), 1 on the others. */
  static std::vector<double> straggler_hosts(int hosts, double fraction, double factor, std::uint64_t seed);

private:
  ActorRuntime& rt_;
  const ClusterLayout& layout_;
  std::vector<double> slowdown_;
  const StragglerModel* stragglers_;
  std::vector<long long> computations_; // per host: computations so far (the step index of its slowdowns)
  long activities_ = 0;
};

} // namespace cs
