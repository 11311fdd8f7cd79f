// `consolidated`: a gang on as few nodes as it can: one node when it fits there (the fullest node that still holds it,
// so whole nodes stay free for large jobs), else the nodes with the most free GPUs first.
#include "policies/cluster/cluster_scheduling.hpp"

#include <numeric>

namespace cs {
namespace {

class ConsolidatedPlacement : public GangPlacement {
public:
  void configure(ObjectReader&) override {}
  std::vector<int> place(const ClusterGpus& c, int gpus) const override
  {
    std::vector<int> nodes(static_cast<std::size_t>(c.nodes()));
    std::iota(nodes.begin(), nodes.end(), 0);
    if (gpus <= c.gpus_per_node)
      if (const int n = c.best_fit_node(nodes, gpus); n >= 0)
        return c.take({n}, gpus);
    return c.take(c.fullest_first(nodes), gpus);
  }
};

} // namespace

CS_REGISTER_POLICY(GangPlacement, ConsolidatedPlacement, "placement", "consolidated",
                   "as few nodes as possible (best-fit node, else the freest nodes first)");

} // namespace cs
