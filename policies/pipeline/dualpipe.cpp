// DualPipe (DeepSeek-V3 technical report §3.2.1; github.com/deepseek-ai/DualPipe, dualpipe.py): two copies of the
// model fed from opposite ends of the pipeline. Device d holds stage d of the copy fed at device 0 and stage p - 1 - d
// of the copy fed at device p - 1, half the step's microbatches going each way; in the steady state a forward of one
// copy runs overlapped with a backward of the other, one's all-to-alls under the other's compute, and zero-bubble
// splits fill the ends. Both copies' gradients of a stage are reduced together.
#include "base/registry.hpp"
#include "policies/pipeline/dualpipe_steps.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cs {

/** Rank r of p runs DeepSeek's eight steps as rank min(r, p - 1 - r) of the p / 2 ranks in its direction
 *  (dualpipe.py's half_rank), over m / 2 microbatches a direction. Its first phase is the copy that reaches it first:
 *  the copy fed at device 0 on the first half of the ranks, the other on the second half. Chunk 0 is the copy fed at
 *  device 0 (microbatches 0 .. m/2 - 1), chunk 1 the other (m/2 .. m - 1), so that no two samples share a number. */
class DualPipe : public PipelineSchedule {
public:
  std::vector<std::vector<PipelineOp>> order(int p, int chunks, int m) const override
  {
    if (chunks != 2)
      throw std::invalid_argument("dualpipe runs two chunks a device, one of each copy of the model");
    if (const std::string problem = devices_problem(p); !problem.empty())
      throw std::invalid_argument(problem);
    if (m % 2 != 0 || m < 2 * p)
      throw std::invalid_argument("dualpipe sends half the step's microbatches each way: it needs an even number of "
                                  "them, at least 2 x pp = " +
                                  std::to_string(2 * p) + ", not " + std::to_string(m));
    const int half = m / 2;
    std::vector<std::vector<PipelineOp>> ops(p);
    for (int r = 0; r < p; ++r) {
      const bool second_half = r >= p / 2;
      ops[r] = dualpipe_rank_steps(p / 2, std::min(r, p - 1 - r), half);
      for (PipelineOp& op : ops[r]) {
        op.chunk ^= second_half ? 1 : 0;
        op.microbatch += op.chunk == 1 ? half : 0;
      }
    }
    return ops;
  }
  std::string devices_problem(int p) const override
  {
    return p >= 2 && p % 2 == 0
               ? std::string{}
               : "dualpipe pairs device d with device pp - 1 - d: it needs an even pp, not " + std::to_string(p);
  }
  bool splits_backward() const override { return true; }
  bool overlaps_passes() const override { return true; }
  int chunks(int) const override { return 2; }
  /** Two chains of p stages: device d holds stage d of the first (0 .. p - 1) and stage p - 1 - d of the second
   *  (p .. 2p - 1, numbered from its own embedding). */
  StageMap stage_map(int devices, int chunks) const override
  {
    return StageMap::from_table(mirrored_stages(devices, chunks), chunks == 2 ? 2 : 1);
  }
};

CS_REGISTER_POLICY(PipelineSchedule, DualPipe, "pipeline", "dualpipe",
                   "DeepSeek's DualPipe: two copies of the model fed from both ends, device d holding stages d and "
                   "pp - 1 - d; forward and backward of the two copies overlapped, zero-bubble splits at the ends; "
                   "pp even, m even and >= 2 pp");

} // namespace cs
