// A checkpoint's bytes as traffic: every GPU's shard simulated as flows over PCIe to its node's host memory, through
// its NIC and the fabric to the checkpoint storage (a vertex on the fabric's top switch behind one link of the
// storage's bandwidth), or to a peer node; and the load a background write puts on the NICs a step uses.
#pragma once

#include "sim/goodput/long_run.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs {

/** Seconds to write `bytes_per_gpu` from every GPU of `scenario`'s cluster to its storage, on the analytical backend
 *  (SimGrid's engine starts once per process): the NICs, the fabric's oversubscribed levels and the storage link are
 *  shared as the flows share them. `nic_share` < 1: each NIC has only that share of its line rate (the rest taken by
 *  a training step's own traffic). */
double simulate_checkpoint_write(const Scenario& scenario, double bytes_per_gpu, double nic_share = 1.0);

/** Seconds for every GPU to copy `bytes_per_gpu` to the same GPU of its partner node (in-memory checkpoints:
 *  checkpoint_peer's pairs). */
double simulate_peer_copy(const Scenario& scenario, double bytes_per_gpu);

/** Seconds for every GPU to copy `bytes_per_gpu` over its PCIe link to its node's host memory (a vertex per node,
 *  one PCIe link per GPU): the stall of an asynchronous checkpoint's first stage. */
double simulate_host_copy(const Scenario& scenario, double bytes_per_gpu);

/** An asynchronous write of `bytes_per_gpu` per GPU lasting `write_s` seconds from time 0, as the step beside it
 *  sees it: every NIC link loses the share of its rate the write's bytes through it take, spread evenly over the
 *  write (as flows sharing a storage link fairly move), as `platform`'s background load. */
void load_nics_with_write(PlatformSpec& platform, const Scenario& scenario, double bytes_per_gpu, double write_s);

} // namespace cs
