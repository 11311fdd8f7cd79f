// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024): 1F1B with each backward split into its input
// gradient (B) and weight gradient (W), the W passes delayed to fill the cool-down bubbles.
#include "base/registry.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"

#include <algorithm>

namespace cs {

/** Device s keeps 1F1B's order of forwards and input-gradient passes (warm-up p - s - 1 forwards) and runs the W
 *  of a microbatch s input-gradient passes later, so at most p microbatches are in flight on any device (1F1B's
 *  memory). With F, B and W of equal length T the bubble is (p - 1) T against 1F1B's 3 (p - 1) T: the input
 *  gradient reaches the previous stage after B alone, and the delayed W fill the waits that remain. */
class ZeroBubbleH1 : public PipelineSchedule {
public:
  std::vector<std::vector<PipelineOp>> order(int p, int chunks, int m) const override
  {
    std::vector<std::vector<PipelineOp>> ops(p);
    for (int s = 0; s < p; ++s) {
      const int warmup = std::min(p - s - 1, m), lag = s;
      int f = 0, b = 0, w = 0;
      auto input_gradient = [&] {
        ops[s].push_back({Pass::BACKWARD_INPUT, b++, 0});
        if (b - w > lag)
          ops[s].push_back({Pass::BACKWARD_WEIGHT, w++, 0});
      };
      for (; f < warmup; ++f)
        ops[s].push_back(PipelineOp::F(f));
      while (b < m) {
        if (f < m)
          ops[s].push_back(PipelineOp::F(f++));
        input_gradient();
      }
      while (w < m)
        ops[s].push_back({Pass::BACKWARD_WEIGHT, w++, 0});
    }
    return ops;
  }
  bool splits_backward() const override { return true; }
};

CS_REGISTER_POLICY(
    PipelineSchedule, ZeroBubbleH1, "pipeline", "zb-h1",
    "ZB-H1 zero-bubble: backward split into input and weight passes, W delayed; 1F1B memory, 1/3 bubble");

} // namespace cs
