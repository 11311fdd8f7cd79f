// The critical path of an executed task graph: the chain of tasks that decided the makespan.
#pragma once

#include "core/task_graph.hpp"
#include "core/timeline.hpp"

#include <vector>

namespace cs {

/** Walks back from the last task to end, each time to the predecessor (dependency or previous task on the
 *  stream) that ended last, i.e. the one the task waited for. Returns task ids from first to last. */
std::vector<int> critical_path(const TaskGraph& graph, const Timeline& timeline);

} // namespace cs
