// `eager-sgd` (Li et al., PPoPP'20): partial collectives. A round's all-reduce starts once a quorum of workers has
// finished its step (solo: the first; majority: half); they wait for its result, while late workers join the
// communication with what they have and put their gradient into a later round instead of holding the others.
#include "policies/sync_scheme/sync_scheme.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>

namespace cs {
namespace {

struct Rounds {
  std::vector<int> ready; // finished a step, waiting for a round
  std::vector<bool> served;
  std::vector<ActorPtr> actor;
  std::vector<int> all;
  bool running = false;
  int active = 0;
};

class EagerSgdScheme : public SyncScheme {
public:
  void configure(ObjectReader& r) override
  {
    r.choice("mode", mode_, {"solo", "majority"},
             "solo: the first finished worker starts each all-reduce; majority: half the workers must have finished");
  }

  void start(SyncWorld& world) override
  {
    const int n = world.workers();
    auto s = std::make_shared<Rounds>();
    s->served.assign(static_cast<std::size_t>(n), false);
    s->actor.resize(static_cast<std::size_t>(n));
    s->all.resize(static_cast<std::size_t>(n));
    std::iota(s->all.begin(), s->all.end(), 0);
    s->active = n;
    const int quorum = mode_ == "solo" ? 1 : (n + 1) / 2;
    for (int w = 0; w < n; ++w)
      world.runtime().spawn("worker-" + std::to_string(w), world.host(w), [&world, s, w, quorum] {
        while (world.claim_step(w)) {
          world.compute(w);
          s->served[w] = false;
          s->ready.push_back(w);
          s->actor[w] = world.runtime().self();
          run_rounds(world, s, quorum);
          while (!s->served[w])
            world.runtime().suspend();
          s->actor[w].reset();
        }
        --s->active;
        run_rounds(world, s, quorum);
      });
  }

private:
  // Starts a round actor when a quorum is ready (fewer once workers have finished) and no round is in flight; it keeps
  // running rounds while arrivals meet the quorum, then stops.
  static void run_rounds(SyncWorld& world, const std::shared_ptr<Rounds>& s, int quorum)
  {
    auto due = [&world, quorum](const Rounds& r) {
      return !r.ready.empty() && static_cast<int>(r.ready.size()) >= std::min(quorum, r.active);
    };
    if (s->running || !due(*s))
      return;
    s->running = true;
    world.runtime().spawn("eager-round", world.host(s->ready.front()), [&world, s, due] {
      while (due(*s)) {
        std::vector<int> contributors = std::move(s->ready);
        s->ready.clear();
        world.allreduce(s->all);
        std::sort(contributors.begin(), contributors.end());
        world.record(contributors);
        for (int w : contributors) {
          s->served[w] = true;
          if (s->actor[w])
            s->actor[w]->resume();
        }
      }
      s->running = false;
    });
  }

  std::string mode_ = "majority";
};

} // namespace

CS_REGISTER_POLICY(SyncScheme, EagerSgdScheme, "sync_scheme", "eager-sgd",
                   "partial collectives: an all-reduce starts when a quorum (solo: one, majority: half) is ready "
                   "(Li et al., PPoPP'20)");

} // namespace cs
