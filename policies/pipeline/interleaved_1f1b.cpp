// Interleaved 1F1B (Narayanan et al., SC'21, Megatron-LM): v model chunks per device, 1F1B over virtual stages.
#include "base/registry.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs {

/** Each device holds v chunks (virtual stages c*p + s). Microbatches go through the chunks in groups of p, as in
 *  Megatron-LM's schedule: the k-th forward op of a device is chunk (k / p) % v of microbatch
 *  (k / (p v)) p + k % p; backwards walk the chunks in reverse. Warm-up is (p - s - 1) * 2 + (v - 1) * p forward
 *  ops (all of them if that exceeds m v). Bubble fraction (p - 1) / (v m). Needs m to be a multiple of p. */
class Interleaved1F1B : public PipelineSchedule {
public:
  int chunks(int vpp) const override { return vpp; }

  std::vector<std::vector<PipelineOp>> order(int p, int v, int m) const override
  {
    if (m % p != 0)
      throw std::invalid_argument("interleaved-1f1b needs the microbatches per pipeline (" + std::to_string(m) +
                                  ") to be a multiple of the pipeline stages (" + std::to_string(p) + ")");
    const int total = m * v;
    auto forward_op = [&](int k) {
      int group = k / (p * v), in_group = k % (p * v);
      return PipelineOp::F(group * p + in_group % p, in_group / p);
    };
    auto backward_op = [&](int k) {
      PipelineOp op = forward_op(k);
      op.pass = Pass::BACKWARD;
      op.chunk = v - 1 - op.chunk;
      return op;
    };
    std::vector<std::vector<PipelineOp>> ops(p);
    for (int s = 0; s < p; ++s) {
      int warmup = std::min(total, (p - s - 1) * 2 + (v - 1) * p);
      int f = 0, b = 0;
      for (; f < warmup; ++f)
        ops[s].push_back(forward_op(f));
      while (b < total) {
        if (f < total)
          ops[s].push_back(forward_op(f++));
        ops[s].push_back(backward_op(b++));
      }
    }
    return ops;
  }
};

CS_REGISTER_POLICY(PipelineSchedule, Interleaved1F1B, "pipeline", "interleaved-1f1b",
                   "interleaved 1F1B (Megatron-LM): v chunks per device, bubble (p-1)/(v m)");

} // namespace cs
