// Writes a run's timeline as a Chrome trace-event JSON document (opens in Perfetto and chrome://tracing).
#pragma once

#include "core/task_graph.hpp"
#include "core/timeline.hpp"
#include "platform/platform_spec.hpp"

#include <string>

namespace cs {

/** One process per node (CPU host), one thread per stream, one complete ("X") event per task with its labels,
 *  bytes and the cost model that answered. Timestamps in microseconds. */
std::string chrome_trace_json(const TaskGraph& graph, const Timeline& timeline, const PlatformSpec& platform);

} // namespace cs
