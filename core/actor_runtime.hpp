// What dynamic (actor-driven) workloads ask of the engine: actors on hosts that compute, use disks, move bytes,
// sleep, suspend, and are resumed or killed, all in simulated time. The engine implements it (on SimGrid).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cs {

/** A started disk operation or network flow. */
class SimActivity {
public:
  virtual ~SimActivity() = default;
};
using ActivityPtr = std::shared_ptr<SimActivity>;

/** A running actor, as another actor sees it. */
class SimActor {
public:
  virtual ~SimActor() = default;
  virtual int host() const = 0;
  /** Wakes the actor if it suspended itself. */
  virtual void resume() = 0;
  /** Ends the actor; the activity it waits on is cancelled. */
  virtual void kill() = 0;
  /** Whether this is the calling actor. */
  virtual bool is_self() const = 0;
};
using ActorPtr = std::shared_ptr<SimActor>;

/** A wake-up call: one actor waits on it (with or without a deadline), others notify it. A notify that comes
 *  before the wait is kept, so a check and a wait never lose one. */
class SimSignal {
public:
  virtual ~SimSignal() = default;
  /** Blocks the caller until notified or until simulated `time` (< 0: no deadline); true when notified. */
  virtual bool wait_until(double time) = 0;
  virtual void notify() = 0;
};
using SignalPtr = std::shared_ptr<SimSignal>;

/** One simulation on a platform's hosts (host indices as in PlatformSpec). Every call but run() is made from
 *  inside an actor. Runs once per process (the engine behind it is a per-process singleton). */
class ActorRuntime {
public:
  virtual ~ActorRuntime() = default;
  /** Starts `main` as an actor on `host` and returns when every actor has ended. */
  virtual void run(int host, std::function<void()> main) = 0;
  /** Says, before run(), that most flows will share links with most others (thousands at once on one fabric), so
   *  that a runtime may re-share every rate at each event rather than track the few that changed. */
  virtual void expect_wide_sharing() {}
  /** Simulated time, in seconds. */
  virtual double now() const = 0;
  virtual ActorPtr spawn(const std::string& name, int host, std::function<void()> body) = 0;
  virtual ActorPtr self() = 0;
  virtual void sleep_for(double seconds) = 0;
  virtual void sleep_until(double time) = 0;
  /** Suspends the calling actor until another resumes it. */
  virtual void suspend() = 0;
  /** A new signal (made from inside an actor). */
  virtual SignalPtr make_signal() = 0;
  /** Computes for `seconds` of the calling actor's host at full speed (concurrent work on a host shares it). */
  virtual void compute(double seconds) = 0;
  virtual bool has_disk(int host) const = 0;
  /** A read or write of `bytes` on `host`'s disk (which must exist). */
  virtual ActivityPtr disk_async(int host, double bytes, bool write) = 0;
  /** A flow of `bytes` from `src` to `dst` over the platform's route, sharing links with every other flow. */
  virtual ActivityPtr flow_async(int src, int dst, double bytes) = 0;
  virtual void wait(const ActivityPtr& activity) = 0;
  /** Waits for the first of `activities` to end and returns its index. */
  virtual std::size_t wait_any(const std::vector<ActivityPtr>& activities) = 0;
};

} // namespace cs
