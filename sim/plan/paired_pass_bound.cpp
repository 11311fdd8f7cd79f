#include "sim/plan/paired_pass_bound.hpp"
#include "workloads/training/block_split.hpp"

#include <algorithm>
#include <vector>

namespace cs {

namespace {

// A pass's compute blocks: each a run of task times on the stream, and whether it starts after an all-to-all of its
// own pass.
struct PassBlocks {
  std::vector<std::vector<double>> tasks;
  std::vector<char> after_alltoall;
  std::size_t size() const { return tasks.size(); }
  double seconds(std::size_t k) const
  {
    double t = 0;
    for (double s : tasks[k])
      t += s;
    return t;
  }
};

class BlockCutter {
public:
  void task(double seconds)
  {
    if (out_.tasks.empty())
      wait(false);
    out_.tasks.back().push_back(seconds);
  }
  void wait(bool alltoall = true)
  {
    out_.tasks.emplace_back();
    out_.after_alltoall.push_back(alltoall ? 1 : 0);
  }
  PassBlocks take() // without the blocks no task was put in
  {
    PassBlocks kept;
    for (std::size_t k = 0; k < out_.size(); ++k)
      if (!out_.tasks[k].empty()) {
        kept.tasks.push_back(std::move(out_.tasks[k]));
        kept.after_alltoall.push_back(out_.after_alltoall[k]);
      }
    return kept;
  }

private:
  PassBlocks out_;
};

// interleave_pair's cut (split_longest_blocks); a cut's second half waits for nothing.
void split_to(PassBlocks& blocks, std::size_t count)
{
  split_longest_blocks(
      blocks.tasks, count, [](double s) { return s; },
      [&blocks](std::size_t at) {
        blocks.after_alltoall.insert(blocks.after_alltoall.begin() + static_cast<std::ptrdiff_t>(at), 0);
      });
}

// A forward's tasks as the MoE emitter lays them out: a dense segment one task; an MoE layer its dense part (with
// any shared experts), the dispatch's wait, its experts, the combine's wait and a join.
bool has_moe(const StageCost& c)
{
  return std::any_of(c.segments.begin(), c.segments.end(), [](const Segment& s) { return s.moe; });
}

PassBlocks forward_blocks(const StageCost& c, double experts_s)
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
PassBlocks backward_blocks(const StageCost& c, double experts_s)
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

} // namespace

double paired_idle_seconds(const StageCost& forward, const StageCost& backward, double experts_forward_s,
                           double experts_backward_s, double alltoall_s)
{
  PassBlocks f = forward_blocks(forward, experts_forward_s), b = backward_blocks(backward, experts_backward_s);
  split_to(f, b.size() == 0 ? 0 : b.size() - 1);
  split_to(b, f.size());
  double free = 0, work = 0;
  double own_end[2] = {0, 0}; // 0: the backward's last block's end, 1: the forward's
  for (std::size_t k = 0; k < std::max(b.size(), f.size()); ++k)
    for (int side = 0; side < 2; ++side) {
      const PassBlocks& blocks = side == 0 ? b : f;
      if (k >= blocks.size())
        continue;
      const double ready = blocks.after_alltoall[k] ? own_end[side] + alltoall_s : 0.0;
      const double seconds = blocks.seconds(k);
      free = std::max(free, ready) + seconds;
      own_end[side] = free;
      work += seconds;
    }
  return std::max(0.0, free - work);
}

} // namespace cs
