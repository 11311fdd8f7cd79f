// NVLink SHARP (NVLS) costs shared by the one-node and the multi-node (NVLS-tree) all-reduce: latency, efficiency and
// the achieved-bandwidth ramp by message size.
#pragma once

namespace cs {

/** nvlsEfficiency for Hopper from NCCL's tuning.cc: the share of the port rate NVLS reductions reach. A device's
 *  catalog entry (nvls_efficiency) overrides it: Blackwell's is 0.74. */
constexpr double kNvlsEfficiency = 0.85;

/** NCCL's hwLat for NVLS over NVLink (tuning.cc, Simple protocol): one NVLS all-reduce costs this much before any
 *  byte moves. The Azure ND H100 v5 sweep's 1 KiB point (25.6 us) agrees. */
constexpr double kNvlsLatency = 25e-6;

/** The share of the NVLS asymptote (port x kNvlsEfficiency) an all-reduce of `bytes` per rank reaches: below one
 *  NCCL loop (channels x chunk) the switch's reduce and multicast stages do not overlap and few channels are busy.
 *  Fitted from a public sweep (docs/collectives.md): log-linear between its points, held beyond them. */
double nvls_size_efficiency(double bytes);

/** NCCL's per-channel NVLSTree bandwidth caps for Hopper (tuning.cc, perChMaxNVLSTreeBws), in bus bandwidth: NCCL
 *  gives NVLSTree one channel per NVLS head (a GPU with its own NIC), and NVIDIA's model caps each at 57.7 GB/s over
 *  two nodes and 45.5 GB/s over more, below what the switch and the NIC allow. */
constexpr double kNvlsTreeHeadBusbwTwoNodes = 57.7e9;
constexpr double kNvlsTreeHeadBusbw = 45.5e9;

/** The bus bandwidth an NVLS-tree all-reduce over `nodes` nodes with `heads` heads per node reaches at most. */
double nvls_tree_busbw_cap(int nodes, int heads);

} // namespace cs
