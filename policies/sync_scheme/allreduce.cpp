// `allreduce`: bulk-synchronous data parallelism, today's training path: every replica waits at each step for the
// slowest, then each pipeline stage's replicas average their gradients with one all-reduce (all stages at once).
#include "policies/sync_scheme/sync_scheme.hpp"

#include <memory>
#include <string>

namespace cs {
namespace {

struct Step {
  int arrived = 0;
  int reducing = 0; // stage all-reduces still running
  WaitList barrier;
  std::vector<std::vector<int>> stage_members;
  std::vector<int> all;
};

class AllReduceScheme : public SyncScheme {
public:
  void configure(ObjectReader&) override {}
  bool pipelined() const override { return true; }

  void start(SyncWorld& world) override
  {
    const int pp = world.stages(), dp = world.workers() / pp;
    auto step = std::make_shared<Step>();
    step->stage_members.resize(static_cast<std::size_t>(pp));
    for (int r = 0; r < dp; ++r)
      for (int s = 0; s < pp; ++s)
        step->stage_members[s].push_back(r * pp + s);
    for (int w = 0; w < world.workers(); ++w)
      step->all.push_back(w);
    for (int r = 0; r < dp; ++r)
      world.runtime().spawn("replica-" + std::to_string(r), world.host(r * pp), [&world, step, r, dp] {
        while (world.claim_step(r)) {
          world.compute(r);
          if (++step->arrived < dp) {
            step->barrier.wait(world.runtime());
            continue;
          }
          step->arrived = 0; // the last to arrive runs the step's all-reduces for everyone
          reduce_stages(world, *step);
          world.record(step->all);
          step->barrier.release_all();
        }
      });
  }

private:
  // One all-reduce per stage, concurrently (each on its own actor); the caller waits for the last.
  static void reduce_stages(SyncWorld& world, Step& step)
  {
    if (step.stage_members.size() == 1) {
      world.allreduce(step.stage_members.front());
      return;
    }
    WaitList done;
    step.reducing = static_cast<int>(step.stage_members.size());
    for (const auto& members : step.stage_members)
      world.runtime().spawn("stage-allreduce", world.host(members.front()), [&world, &step, &done, &members] {
        world.allreduce(members);
        if (--step.reducing == 0)
          done.release_all();
      });
    done.wait(world.runtime());
  }
};

} // namespace

CS_REGISTER_POLICY(SyncScheme, AllReduceScheme, "sync_scheme", "allreduce",
                   "bulk-synchronous: all replicas wait for the slowest, then one all-reduce per stage (BSP)");

} // namespace cs
