#include "core/graph_stragglers.hpp"

#include <map>
#include <utility>

namespace cs {

void apply_stragglers(TaskGraph& graph, const StragglerModel& stragglers)
{
  std::map<std::pair<int, int>, int> first; // (host, iteration) -> its first compute task, in build order
  for (int id = 0; id < static_cast<int>(graph.size()); ++id) {
    const Task& t = graph.task(id);
    if (t.kind != TaskKind::COMPUTE || t.host < 0)
      continue;
    graph.set_compute_seconds(id, t.seconds / stragglers.speed(t.host));
    first.try_emplace({t.host, std::max(0, static_cast<int>(t.labels.iteration))}, id);
  }
  for (const auto& [key, id] : first)
    if (const double delay = stragglers.delay(key.first, key.second); delay > 0)
      graph.set_compute_seconds(id, graph.task(id).seconds + delay);
}

} // namespace cs
