// `allreduce`: bulk-synchronous data parallelism, today's training path: every worker waits at each step for the
// slowest, then all average their gradients with one all-reduce.
#include "policies/sync_scheme/sync_scheme.hpp"

#include <memory>
#include <numeric>
#include <string>

namespace cs {
namespace {

class AllReduceScheme : public SyncScheme {
public:
  void configure(ObjectReader&) override {}

  void start(SyncWorld& world) override
  {
    auto step = std::make_shared<Step>();
    step->all.resize(static_cast<std::size_t>(world.workers()));
    std::iota(step->all.begin(), step->all.end(), 0);
    for (int w = 0; w < world.workers(); ++w)
      world.runtime().spawn("worker-" + std::to_string(w), world.host(w), [&world, step, w] {
        while (world.claim_step(w)) {
          world.compute(w);
          if (++step->arrived < world.workers()) {
            step->barrier.wait(world.runtime());
            continue;
          }
          step->arrived = 0; // the last to arrive runs the step's all-reduce for everyone
          world.allreduce(step->all);
          world.record(step->all);
          step->barrier.release_all();
        }
      });
  }

private:
  struct Step {
    int arrived = 0;
    WaitList barrier;
    std::vector<int> all;
  };
};

} // namespace

CS_REGISTER_POLICY(SyncScheme, AllReduceScheme, "sync_scheme", "allreduce",
                   "bulk-synchronous: all workers wait for the slowest, then one all-reduce (BSP)");

} // namespace cs
