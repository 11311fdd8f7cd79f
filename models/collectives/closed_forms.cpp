#include "models/collectives/collective_algorithm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cs {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const CollectiveAlgorithm* find_algorithm(const std::string& name)
{
  for (const auto& [n, a] : collective_algorithm_list())
    if (n == name)
      return a;
  return nullptr;
}

double time_of(const CollectiveAlgorithm& a, const std::string& kind, const ProtocolParams& p, double S,
               const GroupShape& g)
{
  if (g.ranks <= 1)
    return p.base_latency;
  return a.supports(kind, p, g) ? a.closed_form(kind, p, S, g) : kInf;
}

} // namespace

double collective_time(const std::string& kind, const std::string& name, const ProtocolParams& p, double S,
                       const GroupShape& g)
{
  const CollectiveAlgorithm* a = find_algorithm(name);
  if (!a)
    throw std::invalid_argument("unknown collective algorithm '" + name + "'");
  return time_of(*a, kind, p, S, g);
}

bool closed_form_exact(const std::string& algorithm)
{
  const CollectiveAlgorithm* a = find_algorithm(algorithm);
  return a && a->closed_form_exact();
}

CollectiveChoice choose_collective(const std::string& kind, const std::string& algorithm, double bytes,
                                   const GroupShape& shape)
{
  const auto& kinds = collective_kinds();
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    throw std::invalid_argument("unknown collective '" + kind + "'");
  if (algorithm != "auto" && !find_algorithm(algorithm))
    throw std::invalid_argument("unknown collective algorithm '" + algorithm + "'");
  if (!(bytes >= 0))
    throw std::invalid_argument("collective size must not be negative");
  CollectiveChoice best;
  best.seconds = kInf;
  double best_seen = kInf;
  for (const auto& [name, a] : collective_algorithm_list()) {
    if (algorithm != "auto" && name != algorithm)
      continue;
    // Like NCCL's tuner, "auto" picks among the algorithms NCCL itself would run on this group.
    if (algorithm == "auto" && !a->tuner_eligible(shape))
      continue;
    for (const auto& p : protocols()) {
      const double t = time_of(*a, kind, p, bytes, shape);
      // NCCL chooses by its own model, which leaves some costs out: the choice is by what it sees, the time is all.
      const double seen = std::isfinite(t) && shape.ranks > 1 ? t - a->unseen_by_tuner(kind, p, bytes, shape) : t;
      if (seen < best_seen) {
        best_seen = seen;
        best = CollectiveChoice{name, p, t};
      }
    }
  }
  if (!std::isfinite(best.seconds))
    throw std::invalid_argument("algorithm '" + algorithm + "' cannot run " + kind + " on this group");
  return best;
}

} // namespace cs
