// Hierarchical all-to-all: regroup inside each node by destination rail, then rail to rail across nodes.
#include "policies/collectives/all_to_all.hpp"

namespace cs {
namespace {

class HierarchicalAllToAll : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams& p, const GroupShape& g) const override
  {
    return kind == "all-to-all" && g.nodes > 1 && p.name != "ll128"; // NCCL's LL128: rings and trees only
  }
  double closed_form(const std::string&, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    return all_to_all_time(true, p, S, g);
  }
  CollectiveDone expand(CollectiveEmitter& e) const override { return expand_all_to_all(e, true); }
  int preference() const override { return 5; }
};

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(HierarchicalAllToAll, "hierarchical",
                                 "all-to-all in two phases: by rail inside each node, then rail to rail across nodes");

} // namespace cs
