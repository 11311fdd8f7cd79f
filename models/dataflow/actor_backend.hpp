// The checks an actor workload (MapReduce, Spark) makes of its backend: simgrid, or analytical (flow-level network).
#pragma once

#include "core/workload.hpp"

#include <string>

namespace cs {

/** Throws InputError when `kind` cannot run on env.backend with this cluster: the analytical (flow-level) network
 *  models network.model ideal. */
void check_actor_backend(const WorkloadEnv& env, const std::string& kind);

} // namespace cs
