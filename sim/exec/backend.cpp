#include "sim/exec/executor.hpp"

#include "core/run_progress.hpp"

#include <stdexcept>

namespace cs {

Timeline run_backend(Backend backend, const TaskGraph& graph, const PlatformSpec& platform,
                     const std::vector<ExecutionObserver*>& observers)
{
  if (!graph.collectives().empty())
    throw std::logic_error("the task graph still holds collectives: lower them first (models/collectives/lowering)");
  ProgressObserver progress(graph.size());
  std::vector<ExecutionObserver*> all(observers);
  all.push_back(&progress);
  return backend == Backend::ANALYTICAL ? run_analytical(graph, platform, all) : run_simgrid(graph, platform, all);
}

} // namespace cs
