// Point-to-point send/recv between ranks 0 and 1 (nccl-tests' sendrecv).
#include "models/collectives/collective_algorithm.hpp"

namespace cs {
namespace {

class PointToPoint : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams& p, const GroupShape&) const override
  {
    return kind == "p2p" && p.name != "ll128"; // NCCL runs LL128 for rings and trees only
  }
  double closed_form(const std::string&, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    return p.base_latency + step_latency(p, g) + S / payload_rate(p, g.nodes > 1 ? g.nic_bw : g.intra_bw);
  }
  CollectiveDone expand(CollectiveEmitter& e) const override
  {
    CollectiveDone done(e.ranks());
    const int t = e.send(0, 1, 0, e.req.bytes, 0);
    done[0] = {t};
    done[1] = {t};
    return done;
  }
  int preference() const override { return 6; }
};

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(PointToPoint, "p2p", "one send from rank 0 to rank 1");

} // namespace cs
