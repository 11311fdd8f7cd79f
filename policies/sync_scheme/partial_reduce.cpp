// `partial-reduce` (Miao et al., SIGMOD'21, as in the SDPipe artifact's preduce handler): each worker, after its
// step, asks a central controller for partners; the controller releases the ready workers in a group of P or at the
// first arrival's deadline, the group averages its models with an all-reduce among itself only. Union-find merges
// every ssp_bound x N updates keep any worker from drifting apart; a global sync every sync_every x N updates.
// [recon] staleness-weighted averaging (the paper's dynamic averaging, absent from the code) is an option.
#include "policies/sync_scheme/partial_reduce_groups.hpp"
#include "policies/sync_scheme/sync_scheme.hpp"

#include <memory>
#include <numeric>
#include <string>

namespace cs {

/** Reads the partial-reduce keys shared with sdpipe. */
void read_partial_reduce(ObjectReader& r, PartialReduceParams& p)
{
  Seconds wait{p.wait_time};
  std::string averaging = p.staleness_weighted ? "staleness" : "uniform";
  r.field("group_size", p.group_size, "P: the most workers in a group (0 = half the workers, at least 2)")
      .field("wait_time", wait, "a worker's first wait for partners (then doubled when alone, x0.9 otherwise)")
      .field("ssp_bound", p.ssp_bound, "every ssp_bound x N updates the next group must connect every worker")
      .field("sync_every", p.sync_every, "every sync_every x N updates (an epoch) all workers sync (0 = never)")
      .choice("averaging", averaging, {"uniform", "staleness"},
              "uniform (the code) or staleness-weighted 1/(1+tau) ([recon], the paper's dynamic averaging)");
  p.wait_time = wait.value;
  p.staleness_weighted = averaging == "staleness";
  r.require(p.group_size >= 0 && p.group_size != 1, "group_size", "group_size must be 0 (automatic) or at least 2");
  r.require_at_most("group_size", p.group_size, 1 << 20);
  r.require(wait.value > 0 && wait.value <= 10, "wait_time", "wait_time must be in (0, 10 s]");
  r.require_non_negative("ssp_bound", p.ssp_bound);
  r.require_at_most("ssp_bound", p.ssp_bound, 1 << 20);
  r.require_non_negative("sync_every", p.sync_every);
  r.require_at_most("sync_every", p.sync_every, 1 << 20);
}

namespace {

class PartialReduceScheme : public SyncScheme {
public:
  void configure(ObjectReader& r) override { read_partial_reduce(r, params_); }
  int group_size() const override { return params_.group_size; }

  void start(SyncWorld& world) override
  {
    std::vector<int> all(static_cast<std::size_t>(world.workers()));
    std::iota(all.begin(), all.end(), 0);
    groups_ = std::make_shared<PartialReduceGroups>(world, all, params_);
    for (int w = 0; w < world.workers(); ++w)
      world.runtime().spawn("worker-" + std::to_string(w), world.host(w), [&world, groups = groups_, w] {
        while (world.claim_step(w)) {
          world.compute(w);
          groups->sync(w);
        }
        groups->leave(w);
      });
  }

private:
  PartialReduceParams params_;
  std::shared_ptr<PartialReduceGroups> groups_;
};

} // namespace

CS_REGISTER_POLICY(SyncScheme, PartialReduceScheme, "sync_scheme", "partial-reduce",
                   "groups of the first P ready workers (or whoever is ready at a deadline) average their models "
                   "(Miao et al., SIGMOD'21)");

} // namespace cs
