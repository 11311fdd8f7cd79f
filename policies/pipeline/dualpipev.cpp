// DualPipeV (DeepSeek, github.com/deepseek-ai/DualPipe, dualpipev.py): DualPipe's bidirectional schedule folded into a
// V, so each device holds two chunks of one copy of the model (device d: stages d and 2p - 1 - d), and in the steady
// state runs a forward of one chunk overlapped with a backward of the other, one's all-to-alls under the other's
// compute. Zero-bubble splits (input gradient first, weight gradient later) fill the ends.
#include "base/registry.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"

#include <deque>
#include <stdexcept>
#include <string>

namespace cs {

namespace {

// One device's order, built step by step as dualpipev.py runs its eight steps.
class DeviceOrder {
public:
  explicit DeviceOrder(std::vector<PipelineOp>& ops) : ops_(ops) {}

  void forward(int chunk) { ops_.push_back(PipelineOp::F(forwards_[chunk]++, chunk)); }
  /** A whole backward, or with `zero_bubble` its input gradient now and its weight gradient queued. */
  void backward(int chunk, bool zero_bubble)
  {
    const int mb = backwards_[chunk]++;
    if (!zero_bubble) {
      ops_.push_back(PipelineOp::B(mb, chunk));
      return;
    }
    ops_.push_back({Pass::BACKWARD_INPUT, mb, chunk});
    weights_.push_back({Pass::BACKWARD_WEIGHT, mb, chunk});
  }
  /** The oldest queued weight gradient. */
  void weight()
  {
    ops_.push_back(weights_.front());
    weights_.pop_front();
  }
  /** A forward of `forward_chunk` and a whole backward of `backward_chunk`, overlapped (the forward emitted first). */
  void forward_backward(int forward_chunk, int backward_chunk)
  {
    forward(forward_chunk);
    backward(backward_chunk, false);
    ops_[ops_.size() - 2].overlap = Overlap::WITH_NEXT;
    ops_.back().overlap = Overlap::WITH_PREVIOUS;
  }

private:
  std::vector<PipelineOp>& ops_;
  int forwards_[2] = {0, 0}, backwards_[2] = {0, 0};
  std::deque<PipelineOp> weights_;
};

} // namespace

/** Rank r of p over m microbatches (m >= 2p): (1) 2(p - r - 1) forwards of chunk 0; (2) r + 1 pairs of forwards of
 *  chunks 0 and 1; (3) p - r - 1 times a split backward of chunk 1, its weight gradient and a forward of chunk 1;
 *  (4) m - 2p + r + 1 times forward 0 with backward 1 then forward 1 with backward 0, overlapped (the last rank runs
 * its first pair apart); (5) p - r - 1 times backward 1, then forward 1 with backward 0 overlapped; (6) r + 1 times
 *  backward 1 and backward 0, split from the middle on (odd ranks from backward 1, even ranks from backward 0);
 *  (7) p - r - 1 times a queued weight gradient and a split backward of chunk 0; (8) the r + 1 weight gradients left.
 */
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
    for (int r = 0; r < p; ++r) {
      DeviceOrder d(ops[r]);
      for (int i = 0; i < 2 * (p - r - 1); ++i)
        d.forward(0);
      for (int i = 0; i < r + 1; ++i) {
        d.forward(0);
        d.forward(1);
      }
      for (int i = 0; i < p - r - 1; ++i) {
        d.backward(1, true);
        d.weight();
        d.forward(1);
      }
      for (int i = 0; i < m - 2 * p + r + 1; ++i) {
        if (i == 0 && r == p - 1) { // its chunk 1 needs its own chunk 0's first forward
          d.forward(0);
          d.backward(1, false);
        } else {
          d.forward_backward(0, 1);
        }
        d.forward_backward(1, 0);
      }
      for (int i = 0; i < p - r - 1; ++i) {
        d.backward(1, false);
        d.forward_backward(1, 0);
      }
      const int half = (r + 1) / 2;
      for (int i = 0; i < r + 1; ++i) {
        d.backward(1, i > half || (i == half && r % 2 == 1));
        d.backward(0, i >= half);
      }
      for (int i = 0; i < p - r - 1; ++i) {
        d.weight();
        d.backward(0, true);
      }
      for (int i = 0; i < r + 1; ++i)
        d.weight();
    }
    return ops;
  }
  bool splits_backward() const override { return true; }
  bool overlaps_passes() const override { return true; }
  int chunks(int) const override { return 2; }
  /** The V: device d holds stage d going down and stage 2p - 1 - d coming back. */
  StageMap stage_map(int devices, int chunks) const override
  {
    std::vector<std::vector<int>> table(static_cast<std::size_t>(devices));
    for (int d = 0; d < devices; ++d)
      table[static_cast<std::size_t>(d)] = chunks == 2 ? std::vector<int>{d, 2 * devices - 1 - d} : std::vector<int>{d};
    return StageMap::from_table(table);
  }
};

CS_REGISTER_POLICY(PipelineSchedule, DualPipeV, "pipeline", "dualpipev",
                   "DeepSeek's DualPipeV: two chunks a device in a V, forward and backward chunks overlapped in the "
                   "steady state, zero-bubble splits at the ends; m >= 2 pp");

} // namespace cs
