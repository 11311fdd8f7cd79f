// Data-parallel synchronisation schemes under stragglers: who waits for whom, and how models are combined, decided
// at run time by actors (all-reduce, parameter servers, gossip, partial collectives, partial-reduce, SDPipe).
#pragma once

#include "base/registry.hpp"
#include "core/actor_runtime.hpp"

#include <cstdint>
#include <vector>

namespace cs {

/** What a scheme drives: workers that compute steps and combine models, on the actor runtime. A worker is one
 *  data-parallel replica, or with pipelines (stages() > 1) one stage of one replica: worker = replica x stages + stage.
 *  Every blocking call is made from inside an actor and blocks only the caller. */
class SyncWorld {
public:
  virtual ~SyncWorld() = default;
  virtual ActorRuntime& runtime() = 0;
  virtual int workers() const = 0;
  virtual int stages() const = 0;
  virtual int host(int worker) const = 0;
  virtual std::uint64_t seed() const = 0;
  /** Claims one of the run's steps for `replica` (a step of every stage with pipelines); false once the run's budget
   *  of steps is spent. */
  virtual bool claim_step(int replica) = 0;
  /** Runs `replica`'s claimed step: the compute of its next step, stragglers included (the whole 1F1B pipeline
   *  iteration with stages). The caller sleeps through it. */
  virtual void compute(int replica) = 0;
  /** All-reduce (averaging) of the model over `members` (worker ids, any order); blocks the caller until it ends. */
  virtual void allreduce(const std::vector<int>& members) = 0;
  /** Parameter servers: `worker` pushes its gradient (sharded over the servers) or pulls the model back. */
  virtual void push(int worker) = 0;
  virtual void pull(int worker) = 0;
  /** Gossip: `a` sends its model to `b` and receives b's (both directions at once). */
  virtual void exchange(int a, int b) = 0;
  /** Records one combination of models: each member's new gradient enters the result, averaged uniformly or (for
   *  the convergence proxy) weighted by 1 / (1 + staleness). */
  virtual void record(const std::vector<int>& members, bool staleness_weighted = false) = 0;
  /** Records one worker's clock lead over the slowest worker (ps-ssp's bounded staleness). */
  virtual void record_clock_gap(int gap) = 0;
};

/** One scheme: starts its actors (workers and any controller or servers) on the world and returns; the runtime
 *  runs them to the end of the budget. */
class SyncScheme : public Configurable {
public:
  virtual void start(SyncWorld& world) = 0;
  /** Whether the scheme runs pipelines (stage-wise workers); others need stages() == 1. */
  virtual bool pipelined() const { return false; }
  /** The largest group it was configured with (partial-reduce's P), for checks; 0 = none. */
  virtual int group_size() const { return 0; }
};

/** Actors waiting for a condition another actor signals: cooperative, so a check and a wait cannot interleave. */
class WaitList {
public:
  /** Suspends the calling actor until release_all(). */
  void wait(ActorRuntime& runtime)
  {
    waiting_.push_back(runtime.self());
    runtime.suspend();
  }
  void release_all()
  {
    auto waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& a : waiting)
      a->resume();
  }
  bool empty() const { return waiting_.empty(); }

private:
  std::vector<ActorPtr> waiting_;
};

} // namespace cs
