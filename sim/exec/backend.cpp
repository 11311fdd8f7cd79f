#include "sim/exec/executor.hpp"

#include "core/run_progress.hpp"

#include <stdexcept>

namespace cs {

Timeline run_backend(const std::string& backend, const TaskGraph& graph, const PlatformSpec& platform,
                     const std::vector<ExecutionObserver*>& observers)
{
  if (!graph.collectives().empty())
    throw std::logic_error("the task graph still holds collectives: lower them first (models/collectives/lowering)");
  ProgressObserver progress(graph.size());
  std::vector<ExecutionObserver*> all(observers);
  all.push_back(&progress);
  if (backend == "analytical")
    return run_analytical(graph, platform, all);
  if (backend == "simgrid")
    return run_simgrid(graph, platform, all);
  throw std::invalid_argument("unknown backend '" + backend + "' (expected simgrid or analytical)");
}

} // namespace cs
