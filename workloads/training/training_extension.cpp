#include "workloads/training/training_extension.hpp"

namespace cs {

std::vector<std::unique_ptr<TrainingExtension>> make_training_extensions(const TrainingPlan& plan, TaskGraph& graph)
{
  const auto& registry = Registry<TrainingExtensionKind>::instance();
  std::vector<std::unique_ptr<TrainingExtension>> out;
  for (const auto& name : registry.names())
    if (auto extension = registry.create(name)->make(plan, graph))
      out.push_back(std::move(extension));
  return out;
}

} // namespace cs
