// NVLink SHARP all-reduce (NCCL's NVLS): the NVSwitch reduces and multicasts; one H100/H200 node of more than 4 GPUs.
#include "models/collectives/collective_algorithm.hpp"

namespace cs {
namespace {

class Nvls : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams& p, const GroupShape& g) const override
  {
    return kind == "all-reduce" && g.nvls && g.nodes == 1 && g.ranks > 4 && p.name == "simple";
  }
  // Each GPU pushes its buffer into the switch, which reduces and multicasts; a port carries S (n + 1) / n each way
  // at NCCL's NVLS efficiency and the size ramp, after NCCL's NVLS latency.
  double closed_form(const std::string&, const ProtocolParams&, double S, const GroupShape& g) const override
  {
    const int n = g.ranks;
    return kNvlsLatency + S * (n + 1) / n / (g.intra_bw * g.nvls_efficiency * nvls_size_efficiency(S));
  }
  // Traffic-equivalent emulation: every GPU port carries S (n + 1) / n each way in one ring-shift step whose fixed
  // cost, with the path's latency, is the NVLS latency (the switch itself is not a host on the platform).
  CollectiveDone expand(CollectiveEmitter& e) const override
  {
    const int n = e.ranks();
    const double S = e.req.bytes;
    const GroupShape g = group_shape(e.platform, e.req.hosts);
    const double overhead = std::max(0.0, kNvlsLatency - g.intra_lat);
    CollectiveDone done(n);
    std::vector<int> sent(n);
    for (int r = 0; r < n; ++r)
      sent[r] = e.send(r, (r + 1) % n, 0, S * (n + 1) / n, 0, g.nvls_efficiency * nvls_size_efficiency(S), overhead);
    for (int r = 0; r < n; ++r)
      done[r] = {sent[r], sent[(r + n - 1) % n]};
    return done;
  }
  int preference() const override { return 3; }
};

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(Nvls, "nvls",
                                 "NVLink SHARP all-reduce: in-switch reduction and multicast (H100/H200)");

} // namespace cs
