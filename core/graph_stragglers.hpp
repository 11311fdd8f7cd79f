// cluster.stragglers applied to a task graph: each device's compute runs at its speed, and the seeded slowdown of
// each (device, iteration) delays the device's first compute task of that iteration.
#pragma once

#include "core/task_graph.hpp"
#include "platform/stragglers.hpp"

namespace cs {

/** Scales and delays the compute tasks of `graph` (hosts are devices; a task's iteration label is its step). */
void apply_stragglers(TaskGraph& graph, const StragglerModel& stragglers);

} // namespace cs
