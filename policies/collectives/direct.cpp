// Direct all-to-all: every GPU sends each peer its share at once; inter-node traffic aggregated per node pair.
#include "policies/collectives/all_to_all.hpp"

namespace cs {
namespace {

class DirectAllToAll : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams& p, const GroupShape&) const override
  {
    return kind == "all-to-all" && p.name != "ll128"; // NCCL runs LL128 for rings and trees only
  }
  double closed_form(const std::string&, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    return all_to_all_time(false, p, S, g);
  }
  CollectiveDone expand(CollectiveEmitter& e) const override { return expand_all_to_all(e, false); }
  int preference() const override { return 4; }
};

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(DirectAllToAll, "direct", "all-to-all: every GPU sends each peer its share at once");

} // namespace cs
