// A Chakra execution trace as a task graph: each node after its dependencies and after the node before it on its CPU
// thread or GPU stream; kernel times as measured or rescaled to another GPU, collectives measured or priced.
#pragma once

#include "core/task_graph.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"
#include "traces/chakra_trace.hpp"

namespace cs {

struct ChakraReplayOptions {
  const DeviceSpec* from = nullptr; // the GPU the trace ran on
  const DeviceSpec* to = nullptr;   // the GPU to replay on (kernels rescaled when it differs)
  bool model_collectives = false;   // price sized GPU collectives by the tuner instead of their measured time
  int ranks = 2;                    // the group a priced collective spans (hosts 0..ranks-1 of the platform)
  const PlatformSpec* platform = nullptr;
};

struct ChakraReplay {
  TaskGraph graph;
  int cpu_ops = 0, kernels = 0, collectives = 0, modeled_collectives = 0, other = 0;
  int streams = 0;
  double recorded_cpu_s = 0, recorded_gpu_s = 0; // summed measured durations
  double recorded_span_s = -1;                   // last end - first start, when the trace has start times
};

/** Builds the replay on host 0 of the platform, in chakra_order. A GPU collective, send or receive without a measured
 *  time is always priced (ASTRA-sim's synthetic traces carry only sizes): a send or receive as a point-to-point
 *  transfer to its recorded peer (or rank 1); one without a size keeps its time. */
ChakraReplay build_chakra_replay(const ChakraTrace& trace, const ChakraReplayOptions& options);

/** clustersim's name of Chakra's CollectiveCommType, "" for those it does not price (reduce, gather, scatter, ...). */
std::string chakra_collective_kind(int comm_type);

} // namespace cs
