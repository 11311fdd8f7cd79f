// 1F1B (PipeDream-Flush; Narayanan et al., SC'21): warm up, then alternate one forward and one backward.
#include "policies/pipeline/pipeline_schedule.hpp"
#include "policies/registry.hpp"

#include <algorithm>

namespace cs {

/** Device s (0-based) runs min(p - s - 1, m) warm-up forwards, then alternates forward and backward, then
 *  drains the remaining backwards. Same bubble as GPipe, (p - 1) / m, but at most p - s microbatches of
 *  activations in flight on device s. */
class OneFOneB : public PipelineSchedule {
public:
  std::vector<std::vector<PipelineOp>> order(int p, int chunks, int m) const override
  {
    std::vector<std::vector<PipelineOp>> ops(p);
    for (int s = 0; s < p; ++s) {
      int warmup = std::min(p - s - 1, m);
      int next_f = 0, next_b = 0;
      for (; next_f < warmup; ++next_f)
        ops[s].push_back({true, next_f, 0});
      while (next_b < m) {
        if (next_f < m)
          ops[s].push_back({true, next_f++, 0});
        ops[s].push_back({false, next_b++, 0});
      }
    }
    return ops;
  }
};

CS_REGISTER_POLICY(PipelineSchedule, OneFOneB, "pipeline", "1f1b",
                   "1F1B (PipeDream-Flush): warm-up then one forward, one backward; p-s microbatches in flight");

} // namespace cs
