#include "models/collectives/collective_algorithm.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

namespace cs {

int add_closed_form_collective(TaskGraph& graph, int stream, const std::string& kind, double bytes,
                               const PlatformSpec& platform, const std::vector<int>& group_hosts, int after,
                               TaskLabels labels)
{
  const double seconds =
      group_hosts.size() < 2 ? 0.0 : choose_collective(kind, "auto", bytes, group_shape(platform, group_hosts)).seconds;
  const int t = graph.add_delay(stream, seconds, kind + "/closed-form", labels);
  if (after >= 0)
    graph.add_dependency(after, t);
  return t;
}

std::vector<std::vector<int>> expand_collective(TaskGraph& graph, StreamPool& pool, const PlatformSpec& platform,
                                                const CollectiveRequest& req, const CollectiveChoice& choice)
{
  const int n = static_cast<int>(req.hosts.size());
  if (n == 0)
    throw std::invalid_argument("a collective needs at least one rank");
  CollectiveEmitter e{graph, pool,   platform,
                      req,   choice, graph.intern(req.kind + "/" + choice.algorithm + "/" + choice.protocol.name)};
  if (n == 1)
    return {
        {e.barrier(0, req.ready.empty() || req.ready[0] < 0 ? std::vector<int>{} : std::vector<int>{req.ready[0]})}};
  for (const auto& [name, algorithm] : collective_algorithm_list())
    if (name == (req.kind == "p2p" ? std::string("p2p") : choice.algorithm)) {
      if (!algorithm->supports(req.kind, choice.protocol, group_shape(platform, req.hosts)))
        throw std::invalid_argument(name + " cannot run " + req.kind + " on this group");
      return algorithm->expand(e);
    }
  throw std::invalid_argument("no expansion for algorithm '" + choice.algorithm + "'");
}

} // namespace cs
