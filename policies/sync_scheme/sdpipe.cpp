// `sdpipe` (Miao et al., VLDB'23): pipelines of stages (1F1B inside each), with partial-reduce across the
// data-parallel replicas of each stage (reduce key = stage) under one central controller per stage.
// [recon] A replica starts its next iteration once each of its stages has left its group (the artifact lets stage 0
// start the next forward pass while later stages still reduce; the overlap is at most one stage's group wait).
#include "policies/sync_scheme/partial_reduce_groups.hpp"
#include "policies/sync_scheme/sync_scheme.hpp"

#include <memory>
#include <string>

namespace cs {

void read_partial_reduce(ObjectReader& r, PartialReduceParams& p);

namespace {

struct Replica {
  int arrived = 0;
  bool go = false; // the iteration's compute ran and the budget allowed it
  WaitList stages;
};

class SdPipeScheme : public SyncScheme {
public:
  void configure(ObjectReader& r) override { read_partial_reduce(r, params_); }
  int group_size() const override { return params_.group_size; }
  bool pipelined() const override { return true; }

  void start(SyncWorld& world) override
  {
    const int pp = world.stages(), dp = world.workers() / pp;
    for (int s = 0; s < pp; ++s) {
      std::vector<int> members;
      for (int r = 0; r < dp; ++r)
        members.push_back(r * pp + s);
      groups_.push_back(std::make_shared<PartialReduceGroups>(world, members, params_));
    }
    for (int r = 0; r < dp; ++r) {
      auto replica = std::make_shared<Replica>();
      for (int s = 0; s < pp; ++s)
        world.runtime().spawn("worker-" + std::to_string(r * pp + s), world.host(r * pp + s),
                              [&world, replica, groups = groups_[s], r, pp] {
                                while (iterate(world, *replica, r, pp))
                                  groups->sync(r);
                                groups->leave(r);
                              });
    }
  }

private:
  // The replica's stages meet; the last to arrive runs the 1F1B iteration (all stages sleep through it together).
  static bool iterate(SyncWorld& world, Replica& replica, int r, int pp)
  {
    if (++replica.arrived < pp) {
      replica.stages.wait(world.runtime());
      return replica.go;
    }
    replica.arrived = 0;
    replica.go = world.claim_step(r);
    if (replica.go)
      world.compute(r);
    replica.stages.release_all();
    return replica.go;
  }

  PartialReduceParams params_;
  std::vector<std::shared_ptr<PartialReduceGroups>> groups_;
};

} // namespace

CS_REGISTER_POLICY(SyncScheme, SdPipeScheme, "sync_scheme", "sdpipe",
                   "pipelines (1F1B) with partial-reduce across each stage's data-parallel replicas (Miao et al., "
                   "VLDB'23)");

} // namespace cs
