// The actor side of the actor runtimes on SimGrid (s4u actors, signals, computations), shared by the runtime whose
// disks and flows are SimGrid activities and the one whose disks and flows are a flow-level model.
#pragma once

#include "core/actor_runtime.hpp"
#include "platform/platform_spec.hpp"
#include "sim/platform/simgrid_platform.hpp"

#include <exception>
#include <functional>
#include <map>
#include <simgrid/s4u.hpp>

namespace cs {

struct SgActor final : SimActor {
  SgActor(simgrid::s4u::ActorPtr a, int h, const std::function<void(simgrid::s4u::Actor*)>* before_kill)
      : actor(std::move(a)), host_index(h), before_kill_(before_kill)
  {}
  int host() const override { return host_index; }
  void resume() override { actor->resume(); }
  void kill() override
  {
    if (before_kill_ && *before_kill_)
      (*before_kill_)(actor.get());
    actor->kill();
  }
  bool is_self() const override { return actor.get() == simgrid::s4u::Actor::self(); }
  simgrid::s4u::ActorPtr actor;
  int host_index;

private:
  const std::function<void(simgrid::s4u::Actor*)>* before_kill_;
};

struct SgSignal final : SimSignal {
  simgrid::s4u::MutexPtr mutex = simgrid::s4u::Mutex::create();
  simgrid::s4u::ConditionVariablePtr cv = simgrid::s4u::ConditionVariable::create();
  bool raised = false;

  bool wait_until(double time) override;
  void notify() override;
};

/** Actors, signals and computations on SimGrid; disks, flows and waits are the subclass's. */
class SimgridActorsBase : public ActorRuntime {
public:
  explicit SimgridActorsBase(const PlatformSpec& platform) : platform_(platform) {}

  void run(int host, std::function<void()> main) override;
  void expect_wide_sharing() override { wide_ = true; }
  double now() const override { return simgrid::s4u::Engine::get_clock(); }
  ActorPtr spawn(const std::string& name, int host, std::function<void()> body) override;
  ActorPtr self() override;
  void sleep_for(double seconds) override { simgrid::s4u::this_actor::sleep_for(seconds); }
  void sleep_until(double time) override { simgrid::s4u::this_actor::sleep_until(time); }
  void suspend() override { simgrid::s4u::this_actor::suspend(); }
  SignalPtr make_signal() override { return std::make_shared<SgSignal>(); }
  void compute(double seconds) override;

protected:
  /** The host-to-host routes SimGrid needs (empty: every pair). */
  virtual std::vector<std::pair<int, int>> simgrid_routes() const { return {}; }
  /** Runs once the platform exists, before `main` starts (from maestro). */
  virtual void started() {}

  /** `body`, made to end the whole run when it throws: the first exception is kept, every other actor is killed,
   *  and run() rethrows it once the engine stops (an exception escaping an actor would abort the process). */
  std::function<void()> guarded(std::function<void()> body);

  const PlatformSpec& platform_;
  SimgridPlatform sg_;
  std::exception_ptr failure_;
  std::map<const simgrid::s4u::Host*, int> host_index_;
  std::function<void(simgrid::s4u::Actor*)> before_kill_; // called by a kill, from the killer
  bool wide_ = false;
};

} // namespace cs
