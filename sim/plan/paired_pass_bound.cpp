#include "sim/plan/paired_pass_bound.hpp"

#include <algorithm>
#include <vector>

namespace cs {

namespace {

// A run of compute tasks on the stream, and whether its first task waits for an all-to-all of its own pass.
struct PassBlock {
  std::vector<double> tasks;
  bool after_alltoall = false;
  double seconds() const
  {
    double t = 0;
    for (double s : tasks)
      t += s;
    return t;
  }
};

class BlockCutter {
public:
  void task(double seconds) { current().tasks.push_back(seconds); }
  void wait() { blocks_.push_back({{}, true}); }
  std::vector<PassBlock> take()
  {
    blocks_.erase(std::remove_if(blocks_.begin(), blocks_.end(), [](const PassBlock& b) { return b.tasks.empty(); }),
                  blocks_.end());
    return std::move(blocks_);
  }

private:
  PassBlock& current()
  {
    if (blocks_.empty())
      blocks_.push_back({});
    return blocks_.back();
  }
  std::vector<PassBlock> blocks_;
};

// A forward's tasks as the MoE emitter lays them out: a dense segment one task; an MoE layer its dense part (with
// any shared experts), the dispatch's wait, its experts, the combine's wait and a join.
bool has_moe(const StageCost& c)
{
  return std::any_of(c.segments.begin(), c.segments.end(), [](const Segment& s) { return s.moe; });
}

std::vector<PassBlock> forward_blocks(const StageCost& c, double experts_s)
{
  BlockCutter cut;
  if (!has_moe(c)) { // a stage without MoE layers runs each pass as one task
    cut.task(c.forward_s);
    return cut.take();
  }
  for (const Segment& s : c.segments) {
    if (!s.moe) {
      if (s.forward_s > 0)
        cut.task(s.forward_s);
      continue;
    }
    cut.task(s.forward_s - s.shared_forward_s);
    if (s.shared_forward_s > 0)
      cut.task(s.shared_forward_s);
    cut.wait();
    cut.task(experts_s);
    cut.wait();
    cut.task(0.0);
  }
  return cut.take();
}

// A whole backward's, segments in reverse: an MoE layer a join and any shared experts, the combine gradient's wait,
// its experts, the dispatch gradient's wait, a join and its dense part.
std::vector<PassBlock> backward_blocks(const StageCost& c, double experts_s)
{
  BlockCutter cut;
  if (!has_moe(c)) {
    cut.task(c.backward_s);
    return cut.take();
  }
  for (auto s = c.segments.rbegin(); s != c.segments.rend(); ++s) {
    if (!s->moe) {
      if (s->backward_s > 0)
        cut.task(s->backward_s);
      continue;
    }
    cut.task(0.0);
    if (s->shared_backward_s > 0)
      cut.task(s->shared_backward_s);
    cut.wait();
    cut.task(experts_s);
    cut.wait();
    cut.task(0.0);
    cut.task(s->backward_s - s->shared_backward_s);
  }
  return cut.take();
}

// interleave_pair's split_to: the longest block with two tasks or more cut at the task nearest its middle, until
// there are `count` blocks.
void split_to(std::vector<PassBlock>& blocks, std::size_t count)
{
  while (blocks.size() < count) {
    std::size_t longest = blocks.size();
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].tasks.size() >= 2 && (longest == blocks.size() || blocks[i].seconds() > blocks[longest].seconds()))
        longest = i;
    if (longest == blocks.size())
      return;
    PassBlock& b = blocks[longest];
    const double half = b.seconds() / 2;
    std::size_t at = 1;
    double before = b.tasks[0];
    while (at + 1 < b.tasks.size() && before + b.tasks[at] / 2 < half)
      before += b.tasks[at++];
    PassBlock tail{{b.tasks.begin() + static_cast<std::ptrdiff_t>(at), b.tasks.end()}, false};
    b.tasks.resize(at);
    blocks.insert(blocks.begin() + static_cast<std::ptrdiff_t>(longest) + 1, std::move(tail));
  }
}

} // namespace

double paired_idle_seconds(const StageCost& forward, const StageCost& backward, double experts_forward_s,
                           double experts_backward_s, double alltoall_s)
{
  std::vector<PassBlock> f = forward_blocks(forward, experts_forward_s);
  std::vector<PassBlock> b = backward_blocks(backward, experts_backward_s);
  split_to(f, b.empty() ? 0 : b.size() - 1);
  split_to(b, f.size());
  double free = 0, work = 0;
  double own_end[2] = {0, 0}; // 0: the backward's last block's end, 1: the forward's
  for (std::size_t k = 0; k < std::max(b.size(), f.size()); ++k)
    for (int side = 0; side < 2; ++side) {
      const std::vector<PassBlock>& blocks = side == 0 ? b : f;
      if (k >= blocks.size())
        continue;
      const PassBlock& block = blocks[k];
      const double ready = block.after_alltoall ? own_end[side] + alltoall_s : 0.0;
      const double seconds = block.seconds();
      free = std::max(free, ready) + seconds;
      own_end[side] = free;
      work += seconds;
    }
  return std::max(0.0, free - work);
}

} // namespace cs
