#include "policies/pipeline/dualpipe_steps.hpp"

#include <deque>

namespace cs {

namespace {

// One rank's order, built step by step as DeepSeek's scripts run their eight steps.
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

std::vector<PipelineOp> dualpipe_rank_steps(int ranks, int h, int m)
{
  std::vector<PipelineOp> ops;
  DeviceOrder d(ops);
  const int p = ranks;
  for (int i = 0; i < 2 * (p - h - 1); ++i)
    d.forward(0);
  for (int i = 0; i < h + 1; ++i) {
    d.forward(0);
    d.forward(1);
  }
  for (int i = 0; i < p - h - 1; ++i) {
    d.backward(1, true);
    d.weight();
    d.forward(1);
  }
  for (int i = 0; i < m - 2 * p + h + 1; ++i) {
    if (i == 0 && h == p - 1) { // the middle rank: its chunk 1 waits for its own chunk 0's first forward
      d.forward(0);
      d.backward(1, false);
    } else {
      d.forward_backward(0, 1);
    }
    d.forward_backward(1, 0);
  }
  for (int i = 0; i < p - h - 1; ++i) {
    d.backward(1, false);
    d.forward_backward(1, 0);
  }
  const int half = (h + 1) / 2;
  for (int i = 0; i < h + 1; ++i) {
    d.backward(1, i > half || (i == half && h % 2 == 1));
    d.backward(0, i >= half);
  }
  for (int i = 0; i < p - h - 1; ++i) {
    d.weight();
    d.backward(0, true);
  }
  for (int i = 0; i < h + 1; ++i)
    d.weight();
  return ops;
}

std::vector<std::vector<int>> mirrored_stages(int devices, int chunks)
{
  std::vector<std::vector<int>> table(static_cast<std::size_t>(devices));
  for (int d = 0; d < devices; ++d)
    table[static_cast<std::size_t>(d)] = chunks == 2 ? std::vector<int>{d, 2 * devices - 1 - d} : std::vector<int>{d};
  return table;
}

} // namespace cs
