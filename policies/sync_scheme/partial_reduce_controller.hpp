// The partial-reduce group controller (Miao et al., SIGMOD'21; the SDPipe artifact's preduce handler): ready workers
// are released in groups of P or at a deadline, with union-find merges and epoch-wide global syncs. Pure logic, no
// actors, so that its rules are tested directly.
#pragma once

#include <boost/pending/disjoint_sets.hpp>

#include <cstdint>
#include <vector>

namespace cs {

struct PartialReduceParams {
  int group_size = 0;              // P (max_workers); 0 = half the workers, at least 2
  double wait_time = 1e-3;         // a worker's first wait, seconds; then adapted in [1e-5, 1e-2]
  int ssp_bound = 10;              // every ssp_bound x N updates the next grouping must connect every worker
  int sync_every = 0;              // every sync_every x N updates (an epoch) a global sync of all; 0 = never
  bool staleness_weighted = false; // [recon] weight member i by 1/(1+tau_i) (the paper's dynamic averaging)
};

/** What the controller decided: groups to run now (sorted members) and whether they are a global sync. */
struct PartialReduceRelease {
  std::vector<std::vector<int>> groups;
  bool global = false;
  bool merge = false;   // this grouping connected every component (the ssp_bound rule)
  double deadline = -1; // >= 0: the caller arms a timer for deadline(epoch) at this time
  long long epoch = 0;
};

class PartialReduceController {
public:
  PartialReduceController(int workers, PartialReduceParams params);

  /** `worker` is ready at `now` with its current wait time: the first arrival of a round sets the deadline. */
  PartialReduceRelease arrive(int worker, double now, double wait);
  /** A timer armed for `epoch` fired: release the ready list if that round is still open. */
  PartialReduceRelease deadline(long long epoch);
  /** `worker` will not arrive again (its budget is spent): rounds that waited for it release. */
  PartialReduceRelease leave(int worker);

  /** A worker's next wait after a group of `size`: doubled (at most 10 ms) when alone, else x0.9 (>= 0.01 ms). */
  static double next_wait(double wait, std::size_t size);

  int group_size() const { return group_size_; }
  int active() const { return active_; }

private:
  PartialReduceRelease release(bool forced);
  std::vector<std::vector<int>> split(std::vector<int> ready) const;
  bool covers_every_component() const;
  void join(const std::vector<int>& group);
  void reset_components();

  int workers_;
  int group_size_;
  PartialReduceParams params_;
  std::vector<int> ready_;
  std::vector<bool> gone_;
  int active_;
  long long epoch_ = 0;
  bool deadline_set_ = false;
  long long updates_since_merge_ = 0;
  long long updates_since_sync_ = 0;
  mutable std::vector<int> rank_, parent_;
  mutable boost::disjoint_sets<int*, int*> components_; // find_set compresses paths: a const query still writes
};

} // namespace cs
