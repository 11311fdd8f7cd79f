// DualPipeV (DeepSeek, github.com/deepseek-ai/DualPipe, dualpipev.py): DualPipe's bidirectional schedule folded into a
// V, so each device holds two chunks of one copy of the model (device d: stages d and 2p - 1 - d), and in the steady
// state runs a forward of one chunk overlapped with a backward of the other, one's all-to-alls under the other's
// compute. Zero-bubble splits (input gradient first, weight gradient later) fill the ends.
#include "base/registry.hpp"
#include "policies/pipeline/dualpipe_steps.hpp"

#include <stdexcept>
#include <string>

namespace cs {

/** Rank r of p runs DeepSeek's eight steps (dualpipe_rank_steps) as rank r of p ranks in one direction. */
class DualPipeV : public PipelineSchedule {
public:
  std::vector<std::vector<PipelineOp>> order(int p, int chunks, int m) const override
  {
    if (chunks != 2)
      throw std::invalid_argument("dualpipev runs two chunks a device");
    if (m < 2 * p)
      throw std::invalid_argument("dualpipev needs at least 2 x pp = " + std::to_string(2 * p) +
                                  " microbatches per step, not " + std::to_string(m));
    std::vector<std::vector<PipelineOp>> ops(p);
    for (int r = 0; r < p; ++r)
      ops[r] = dualpipe_rank_steps(p, r, m);
    return ops;
  }
  bool splits_backward() const override { return true; }
  bool overlaps_passes() const override { return true; }
  int chunks(int) const override { return 2; }
  /** The V: device d holds stage d going down and stage 2p - 1 - d coming back. */
  StageMap stage_map(int devices, int chunks) const override
  {
    return StageMap::from_table(mirrored_stages(devices, chunks));
  }
};

CS_REGISTER_POLICY(PipelineSchedule, DualPipeV, "pipeline", "dualpipev",
                   "DeepSeek's DualPipeV: two chunks a device in a V, forward and backward chunks overlapped in the "
                   "steady state, zero-bubble splits at the ends; m >= 2 pp");

} // namespace cs
