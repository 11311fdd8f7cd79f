// GPipe (Huang et al., NeurIPS'19): all forward passes, then all backward passes.
#include "base/registry.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"

namespace cs {

/** Every device runs the m forward passes, then the m backward passes in reverse microbatch order; it holds
 *  the activations of all m microbatches at the peak. Bubble fraction (p - 1) / m. */
class GPipe : public PipelineSchedule {
public:
  std::vector<std::vector<PipelineOp>> order(int devices, int chunks, int m) const override
  {
    std::vector<std::vector<PipelineOp>> ops(devices);
    for (int d = 0; d < devices; ++d) {
      for (int mb = 0; mb < m; ++mb)
        ops[d].push_back(PipelineOp::F(mb));
      for (int mb = m - 1; mb >= 0; --mb)
        ops[d].push_back(PipelineOp::B(mb));
    }
    return ops;
  }
};

CS_REGISTER_POLICY(PipelineSchedule, GPipe, "pipeline", "gpipe",
                   "GPipe: all forwards then all backwards; bubble (p-1)/m, m microbatches of activations");

} // namespace cs
