// NVLink SHARP all-reduce (NCCL's NVLS): the NVSwitch reduces and multicasts; H100/H200 nodes of more than 4 GPUs.
#include "models/collectives/collective_algorithm.hpp"

namespace cs {
namespace {

class Nvls : public CollectiveAlgorithm {
public:
  bool supports(const std::string& kind, const ProtocolParams& p, const GroupShape& g) const override
  {
    return kind == "all-reduce" && g.nvls && g.ranks > 4 && !p.single_channel;
  }
  // Each GPU pushes its buffer into the switch, which reduces and multicasts; a port carries S (n + 1) / n each way.
  double closed_form(const std::string&, const ProtocolParams& p, double S, const GroupShape& g) const override
  {
    const int n = g.ranks;
    return p.base_latency + 2 * step_latency(p, g) + S * (n + 1) / n / (g.intra_bw * kNvlsEfficiency);
  }
  // Traffic-equivalent emulation: every GPU port carries S (n + 1) / n each way at the NVLS efficiency, in one
  // ring-shift step (the switch itself is not a host on the platform).
  CollectiveDone expand(CollectiveEmitter& e) const override
  {
    const int n = e.ranks();
    CollectiveDone done(n);
    std::vector<int> sent(n);
    for (int r = 0; r < n; ++r)
      sent[r] = e.send(r, (r + 1) % n, 0, e.req.bytes * (n + 1) / n, 0, kNvlsEfficiency);
    for (int r = 0; r < n; ++r) // one step; the closed form's second step (multicast back) is its overhead
      done[r] = {sent[r], sent[(r + n - 1) % n]};
    return done;
  }
  int preference() const override { return 3; }
};

} // namespace

CS_REGISTER_COLLECTIVE_ALGORITHM(Nvls, "nvls",
                                 "NVLink SHARP all-reduce: in-switch reduction and multicast (H100/H200)");

} // namespace cs
