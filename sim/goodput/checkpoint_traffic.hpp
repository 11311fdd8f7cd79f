// A checkpoint's bytes as traffic: every GPU's shard simulated as a flow through its NIC and the fabric, to the
// checkpoint storage (a vertex on the fabric's top switch behind one link of the storage's bandwidth) or to a peer.
#pragma once

#include "sim/scenario/scenario.hpp"

namespace cs {

/** Seconds to write `bytes_per_gpu` from every GPU of `scenario`'s cluster to its storage, on the analytical backend
 *  (SimGrid's engine starts once per process): the NICs, the fabric's oversubscribed levels and the storage link are
 *  shared as the flows share them. */
double simulate_checkpoint_write(const Scenario& scenario, double bytes_per_gpu);

/** Seconds for every GPU to copy `bytes_per_gpu` to the same GPU of the next node (in-memory checkpoints). */
double simulate_peer_copy(const Scenario& scenario, double bytes_per_gpu);

} // namespace cs
