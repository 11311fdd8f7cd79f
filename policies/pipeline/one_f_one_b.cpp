// 1F1B (PipeDream-Flush; Narayanan et al., SC'21): warm up, then alternate one forward and one backward.
#include "base/registry.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"

#include <algorithm>

namespace cs {

/** Device s (0-based) runs min(p - s - 1, m) warm-up forwards, then alternates forward and backward, then
 *  drains the remaining backwards. Same bubble as GPipe, (p - 1) / m, but at most p - s microbatches of
 *  activations in flight on device s. */
std::vector<std::vector<PipelineOp>> warmup_then_alternate(const std::vector<int>& warmup, int m)
{
  std::vector<std::vector<PipelineOp>> ops(warmup.size());
  for (std::size_t s = 0; s < warmup.size(); ++s) {
    int next_f = 0, next_b = 0;
    for (; next_f < std::min(warmup[s], m); ++next_f)
      ops[s].push_back(PipelineOp::F(next_f));
    while (next_b < m) {
      if (next_f < m)
        ops[s].push_back(PipelineOp::F(next_f++));
      ops[s].push_back(PipelineOp::B(next_b++));
    }
  }
  return ops;
}

std::vector<int> peak_in_flight(const std::vector<std::vector<PipelineOp>>& order)
{
  std::vector<int> peak;
  for (const auto& ops : order) {
    int held = 0, most = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const bool pair = ops[i].overlap == Overlap::WITH_NEXT && i + 1 < ops.size();
      const std::size_t end = pair ? i + 2 : i + 1;
      int allocated = 0, freed = 0;
      for (std::size_t k = i; k < end; ++k) {
        allocated += ops[k].forward() ? 1 : 0;
        freed += !ops[k].forward() && ops[k].completes() ? 1 : 0;
      }
      // A pair's forward allocates while its backward still holds its own, unless it frees a layer as it
      // allocates one: then it holds what was held before it or after it.
      const int peak = pair && ops[i].frees_by_layer ? std::max(held, held + allocated - freed) : held + allocated;
      most = std::max(most, peak);
      held += allocated - freed;
      i = end - 1;
    }
    peak.push_back(most);
  }
  return peak;
}

void pair_backward_with_next_forward(std::vector<std::vector<PipelineOp>>& order)
{
  for (auto& ops : order)
    for (std::size_t i = 0; i + 1 < ops.size(); ++i)
      if (ops[i].pass == Pass::BACKWARD && ops[i + 1].forward() && ops[i].overlap == Overlap::NONE &&
          ops[i + 1].overlap == Overlap::NONE) {
        ops[i].overlap = Overlap::WITH_NEXT;
        ops[i + 1].overlap = Overlap::WITH_PREVIOUS;
        ops[i].frees_by_layer = ops[i + 1].frees_by_layer = true;
        ++i;
      }
}

class OneFOneB : public PipelineSchedule {
public:
  std::vector<std::vector<PipelineOp>> order(int p, int chunks, int m) const override
  {
    std::vector<int> warmup(p);
    for (int s = 0; s < p; ++s)
      warmup[s] = p - s - 1;
    return warmup_then_alternate(warmup, m);
  }
};

CS_REGISTER_POLICY(PipelineSchedule, OneFOneB, "pipeline", "1f1b",
                   "1F1B (PipeDream-Flush): warm-up then one forward, one backward; p-s microbatches in flight");

} // namespace cs
