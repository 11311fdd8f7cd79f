// `spread`: a gang's GPUs one per node, round after round over the nodes with the most free GPUs: load spread
// evenly, at the price of crossing the network for every multi-GPU job.
#include "policies/cluster/cluster_scheduling.hpp"

#include <numeric>

namespace cs {
namespace {

class SpreadPlacement : public GangPlacement {
public:
  void configure(ObjectReader&) override {}
  std::vector<int> place(const ClusterGpus& c, int gpus) const override
  {
    std::vector<int> nodes(static_cast<std::size_t>(c.nodes()));
    std::iota(nodes.begin(), nodes.end(), 0);
    nodes = c.fullest_first(nodes);
    std::vector<std::vector<int>> free;
    for (int n : nodes)
      free.push_back(c.whole_free_on(n));
    std::vector<int> out;
    for (std::size_t round = 0; static_cast<int>(out.size()) < gpus; ++round) {
      bool any = false;
      for (std::size_t i = 0; i < free.size() && static_cast<int>(out.size()) < gpus; ++i)
        if (round < free[i].size()) {
          out.push_back(free[i][round]);
          any = true;
        }
      if (!any)
        return {};
    }
    return out;
  }
};

} // namespace

CS_REGISTER_POLICY(GangPlacement, SpreadPlacement, "placement", "spread",
                   "one GPU per node in turn over the freest nodes (load spread, every gang crosses the network)");

} // namespace cs
