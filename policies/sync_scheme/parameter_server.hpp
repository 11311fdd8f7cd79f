// Parameter-server training shared by ps-bsp, ps-asp and ps-ssp: workers push gradients to sharded servers and pull
// the model back; the policies differ only in how long a worker may run ahead of the others.
#pragma once

#include "policies/sync_scheme/sync_scheme.hpp"

namespace cs {

/** Starts one actor per worker running the push/pull loop. `staleness` bounds how many steps a worker may lead the
 *  slowest (0 = bulk-synchronous: every step waits for all pushes; < 0 = unbounded, asynchronous). */
void start_parameter_server(SyncWorld& world, int staleness);

} // namespace cs
