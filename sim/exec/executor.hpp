// The two backends that run a task graph on a platform: `analytical` (list scheduling) and `simgrid` (flow-level).
#pragma once

#include "core/backend.hpp"
#include "core/task_graph.hpp"
#include "core/timeline.hpp"
#include "platform/platform_spec.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace cs {

/** Serialised list scheduling: each stream runs one task at a time; a transfer holds every link direction on its
 *  route from start to end and lasts route latency + bytes / bottleneck bandwidth (no sharing). */
Timeline run_analytical(const TaskGraph& graph, const PlatformSpec& platform,
                        const std::vector<ExecutionObserver*>& observers = {});

/** Full contention on SimGrid 3.32: one actor per stream, kernels as Execs, transfers as Comms over the routes.
 *  SimGrid's engine is a per-process singleton: call this at most once per process (see isolated_run.hpp). */
Timeline run_simgrid(const TaskGraph& graph, const PlatformSpec& platform,
                     const std::vector<ExecutionObserver*>& observers = {});

/** Thrown by run_simgrid, before the engine starts, for a graph with more streams than SimGrid can give actors: each
 *  takes a memory mapping, and Linux allows a process 65,536 by default. */
class ActorLimitError : public std::length_error {
public:
  ActorLimitError(long actors, long limit)
      : std::length_error("the graph needs " + std::to_string(actors) + " SimGrid actors"), actors_(actors),
        limit_(limit)
  {}
  long actors() const { return actors_; }
  long limit() const { return limit_; }

private:
  long actors_, limit_;
};

/** Runs `graph` on `backend`. */
Timeline run_backend(Backend backend, const TaskGraph& graph, const PlatformSpec& platform,
                     const std::vector<ExecutionObserver*>& observers = {});

} // namespace cs
