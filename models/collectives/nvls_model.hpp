// NVLink SHARP (NVLS) costs shared by the one-node and the multi-node (NVLS-tree) all-reduce: latency, efficiency and
// the achieved-bandwidth ramp by message size.
#pragma once

namespace cs {

/** nvlsEfficiency for Hopper from NCCL's tuning.cc: the share of the port rate NVLS reductions reach. */
constexpr double kNvlsEfficiency = 0.85;

/** NCCL's hwLat for NVLS over NVLink (tuning.cc, Simple protocol): one NVLS all-reduce costs this much before any
 *  byte moves. The Azure ND H100 v5 sweep's 1 KiB point (25.6 us) agrees. */
constexpr double kNvlsLatency = 25e-6;

/** The share of the NVLS asymptote (port x kNvlsEfficiency) an all-reduce of `bytes` per rank reaches: below one
 *  NCCL loop (channels x chunk) the switch's reduce and multicast stages do not overlap and few channels are busy.
 *  Fitted from a public sweep (docs/collectives.md): log-linear between its points, held beyond them. */
double nvls_size_efficiency(double bytes);

} // namespace cs
