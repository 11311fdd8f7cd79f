// One SimGrid engine per process, set up the same way for the task-graph executor and the actor runtime.
#pragma once

#include <memory>
#include <string>

namespace simgrid::s4u {
class Engine;
} // namespace simgrid::s4u

namespace cs {

/** Timing precisions for SimGrid's solver: the executor needs 1e-13 (the backends agree to 1e-9 relative on
 *  contention-free graphs); actor workloads keep SimGrid's 1e-9 surf precision (with 1e-13 and 1e-12, SimGrid 3.32
 *  crashes on the MapReduce reference scenario's disk and flow mix: a segmentation fault within 0.15 s).
 *  maxmin <= 0 keeps the default. */
struct SimgridPrecision {
  double surf = 1e-9;
  double maxmin = 0;
};

/** Creates the process's engine with logging quietened, the precisions set and the network model configured
 *  (before any platform exists). */
std::unique_ptr<simgrid::s4u::Engine> start_simgrid_session(NetworkModel network_model, SimgridPrecision precision);

/** Memory mappings this process may still make, less a reserve for what a run maps besides actor stacks (Linux's
 *  vm.max_map_count, 65,536 by default, less the mappings in use). */
long simgrid_mappings_left();

/** Readies the engine for `actors` actors at once, each stack a mapping plus a guard page: drops the guard pages
 *  where two mappings per actor do not fit in `left`. (Call after start_simgrid_session, before any actor.) */
void fit_actor_stacks(long actors, long left);

} // namespace cs
