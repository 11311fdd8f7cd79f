// GPU-cluster job scheduling: which queued jobs start now (the queue policy, `policies.cluster`) and which GPUs a
// job's gang gets (the placement policy, `policies.placement`).
#pragma once

#include "base/registry.hpp"

#include <vector>

namespace cs {

/** A job waiting for GPUs. `duration_s` is its recorded run time: SJF's and backfill's estimate (perfect knowledge,
 *  as trace-driven studies such as Tiresias assume). */
struct QueuedJob {
  int id = 0;
  double submit_s = 0;
  int gpus = 1;
  int gpu_milli = 1000;
  double duration_s = 0;
};

/** A running job as schedulers see it: what it holds and when it is expected to end. */
struct RunningJob {
  int gpus = 1;
  int gpu_milli = 1000;
  double end_s = 0;
};

/** The cluster at a scheduling point. */
class ClusterQueueView {
public:
  virtual ~ClusterQueueView() = default;
  virtual double now() const = 0;
  virtual int total_gpus() const = 0;
  virtual int free_gpus() const = 0; // GPUs no job holds any share of
  /** Running jobs by expected end, earliest first. */
  virtual const std::vector<RunningJob>& running() const = 0;
  /** Starts `job` if the placement policy finds GPUs for its whole gang now; false (nothing changes) otherwise. */
  virtual bool try_start(const QueuedJob& job) = 0;
};

/** Queue policy: called at every arrival and completion; starts jobs through view.try_start. Returns the queue
 *  indices of the jobs it started. */
class JobScheduler : public Configurable {
public:
  virtual std::vector<std::size_t> schedule(const std::vector<QueuedJob>& queue, ClusterQueueView& view) = 0;
};

/** The cluster's GPUs: per GPU its node and the share still free (thousandths); per node its rack (leaf switch). */
struct ClusterGpus {
  int gpus_per_node = 8;
  std::vector<int> rack_of_node;
  std::vector<int> free_milli; // per GPU
  std::vector<int> free_whole; // per node: GPUs with nothing on them

  int nodes() const { return static_cast<int>(free_whole.size()); }
  int node_of(int gpu) const { return gpu / gpus_per_node; }
  /** The whole free GPUs of `node`, lowest first. */
  std::vector<int> whole_free_on(int node) const;
  /** For a fractional job (one GPU, milli < 1000): the GPU with the least free share that still holds it (best fit,
   *  so shared GPUs fill before whole ones are split), or -1. */
  int best_fit_share(int milli) const;
  /** Whole free GPUs taken from `nodes` in that order until `gpus` are found; empty when they hold fewer. */
  std::vector<int> take(const std::vector<int>& nodes, int gpus) const;
  /** The node with the fewest whole free GPUs that still holds `gpus` among `nodes` (best fit), or -1. */
  int best_fit_node(const std::vector<int>& nodes, int gpus) const;
  /** `nodes` ordered by whole free GPUs, most first (ties: lower index first). */
  std::vector<int> fullest_first(std::vector<int> nodes) const;
};

/** Gang placement: `gpus` whole GPUs for one job, all at once, or none. */
class GangPlacement : public Configurable {
public:
  /** GPU indices for the gang, or empty when it cannot be placed now. Fractional jobs go through best_fit_share. */
  virtual std::vector<int> place(const ClusterGpus& cluster, int gpus) const = 0;
};

} // namespace cs
