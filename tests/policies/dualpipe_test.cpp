// DualPipe (DeepSeek-V3 report §3.2.1, dualpipe.py): two copies of the model fed from both ends. Each device runs
// every pass of its two stages once, ranks r and pp - 1 - r mirror each other, the stage map holds two chains, the
// bubble is the report's (PP/2 - 1)(F&B + B - 3W) against 1F1B's (PP - 1)(F + B), and shapes it cannot run are
// refused.
#include "base/registry.hpp"
#include "policies/pipeline/schedule_timing.hpp"
#include "sim/exec/executor.hpp"
#include "tests/policies/two_chunk_order.hpp"
#include "tests/training_helpers.hpp"
#include "workloads/training/pipeline_graph.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <tuple>

namespace {

std::unique_ptr<cs::PipelineSchedule> dualpipe_schedule()
{
  return cs::Registry<cs::PipelineSchedule>::instance().create("dualpipe");
}

// The per-op length DualPipe's ops take: forward F, input gradient B - W, weight gradient W.
double op_seconds(cs::Pass pass, double f, double b, double w)
{
  switch (pass) {
  case cs::Pass::FORWARD:
    return f;
  case cs::Pass::BACKWARD:
    return b;
  case cs::Pass::BACKWARD_INPUT:
    return b - w;
  case cs::Pass::BACKWARD_WEIGHT:
    return w;
  }
  return 0.0;
}

// Compute alone, each op as soon as its device is free and its input has arrived.
double compute_only_step(const cs::PipelineSchedule& schedule, int p, int m, double f, double b, double w)
{
  const auto order = schedule.order(p, schedule.chunks(1), m);
  const auto map = schedule.stage_map(p, schedule.chunks(1));
  auto seconds = [&](int, cs::Pass pass) { return op_seconds(pass, f, b, w); };
  return cs::schedule_iteration_ends(order, map, seconds, {}, 1).front();
}

// The same with an overlapped pair run as the report counts it (F&B): it starts once both its inputs have arrived, and
// both its outputs leave when it ends. (The task graph interleaves the pair's kernels, so its outputs leave earlier.)
double paired_step(const cs::PipelineSchedule& schedule, int p, int m, double f, double b, double w)
{
  const auto order = schedule.order(p, 2, m);
  const auto map = schedule.stage_map(p, 2);
  std::map<std::pair<int, int>, double> forward_end, gradient_end; // (microbatch, stage)
  std::vector<std::size_t> next(p, 0);
  std::vector<double> free_at(p, 0);
  auto input = [&](const cs::PipelineOp& op, int d, double* at) { // false: not arrived yet
    const int vs = map.stage(d, op.chunk);
    const bool needs = op.forward() ? !map.chain_first(vs) : op.sends_gradient() && !map.chain_last(vs);
    if (!needs)
      return true;
    const auto& ends = op.forward() ? forward_end : gradient_end;
    const auto found = ends.find({op.microbatch, op.forward() ? vs - 1 : vs + 1});
    if (found == ends.end())
      return false;
    *at = std::max(*at, found->second);
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int d = 0; d < p; ++d)
      while (next[d] < order[d].size()) {
        const auto& op = order[d][next[d]];
        const bool pair = op.overlap == cs::Overlap::WITH_NEXT;
        double start = free_at[d];
        if (!input(op, d, &start) || (pair && !input(order[d][next[d] + 1], d, &start)))
          break;
        double end = start + op_seconds(op.pass, f, b, w);
        if (pair)
          end += op_seconds(order[d][next[d] + 1].pass, f, b, w);
        for (std::size_t k = next[d]; k <= next[d] + (pair ? 1 : 0); ++k) {
          const auto& run = order[d][k];
          const int vs = map.stage(d, run.chunk);
          if (run.forward())
            forward_end[{run.microbatch, vs}] = end;
          else if (run.sends_gradient())
            gradient_end[{run.microbatch, vs}] = end;
        }
        free_at[d] = end;
        next[d] += pair ? 2 : 1;
        progress = true;
      }
  }
  for (int d = 0; d < p; ++d)
    EXPECT_EQ(next[d], order[d].size()) << "device " << d << " waits for a pass that never runs";
  return *std::max_element(free_at.begin(), free_at.end());
}

} // namespace

TEST(DualPipe, HoldsTwoCopiesOfTheModelFedFromBothEnds)
{
  auto s = dualpipe_schedule();
  EXPECT_EQ(s->chunks(1), 2);
  const auto map = s->stage_map(4, 2);
  EXPECT_EQ(map.chains(), 2);
  EXPECT_EQ(map.chain_length(), 4);
  EXPECT_EQ(map.stage(0, 0), 0); // device 0: the first copy's embedding stage ...
  EXPECT_EQ(map.stage(0, 1), 7); // ... and the second copy's loss stage
  EXPECT_EQ(map.stage(3, 1), 4); // device 3 feeds the second copy
  EXPECT_TRUE(map.chain_first(4) && map.chain_last(3) && !map.chain_last(4));
  EXPECT_EQ(map.twin(1), 5);
  EXPECT_EQ(map.device_of(map.twin(1)), 2); // stage 1 of each copy: devices 1 and pp - 1 - 1
  EXPECT_FALSE(map.is_interleaved());
  // Devices 0 and pp - 1 each run a copy's output layer and loss; DualPipeV's V runs its one on device 0.
  EXPECT_TRUE(map.holds_chain_last(0) && map.holds_chain_last(3));
  EXPECT_FALSE(map.holds_chain_last(1) || map.holds_chain_last(2));
  const auto v = cs::Registry<cs::PipelineSchedule>::instance().create("dualpipev")->stage_map(4, 2);
  EXPECT_TRUE(v.holds_chain_last(0));
  EXPECT_FALSE(v.holds_chain_last(3));
}

TEST(DualPipe, RunsEveryPassOnceAndMirrorsItsRanks)
{
  auto s = dualpipe_schedule();
  for (int p : {2, 4, 8})
    for (int m : {2 * p, 2 * p + 2, 4 * p}) {
      const auto order = s->order(p, 2, m);
      ASSERT_EQ(static_cast<int>(order.size()), p);
      // The report's activations: PP + 1 chunk-microbatches at most (Table 2).
      const auto held = cs::peak_in_flight(order);
      EXPECT_EQ(*std::max_element(held.begin(), held.end()), p + 1) << "p=" << p << " m=" << m;
      for (int d = 0; d < p; ++d) {
        cs::testing::expect_two_chunk_order(order[d], {0, m / 2}, m / 2, d);
        // Rank pp - 1 - r runs rank r's steps on the other copy (dualpipe.py's half_rank).
        const auto& mirror = order[p - 1 - d];
        ASSERT_EQ(mirror.size(), order[d].size());
        for (std::size_t i = 0; i < mirror.size(); ++i) {
          EXPECT_EQ(mirror[i].pass, order[d][i].pass);
          EXPECT_EQ(mirror[i].chunk, 1 - order[d][i].chunk);
          EXPECT_EQ(mirror[i].overlap, order[d][i].overlap);
        }
      }
    }
}

TEST(DualPipe, BubbleIsTheReportsAndBelow1f1bs)
{
  // DeepSeek-V3 report, Table 2: 1F1B idles (PP - 1)(F + B), DualPipe (PP/2 - 1)(F&B + B - 3W), where F&B is a
  // forward and a backward run together as one (here F + B long). Both do m (F + B) of work a device. The report's
  // count holds where a forward takes as long as an input gradient (F = B - W) and a weight gradient no longer;
  // otherwise the steps idle a little more or less than it says.
  auto s = dualpipe_schedule();
  auto one = cs::Registry<cs::PipelineSchedule>::instance().create("1f1b");
  for (const auto& [f, b, w] : {std::tuple{1.0, 2.0, 1.0}, std::tuple{1.5, 2.0, 0.5}, std::tuple{1.0, 1.25, 0.25}})
    for (int p : {2, 4, 8, 16})
      for (int m : {2 * p, 4 * p}) {
        const double work = m * (f + b), dual = (p / 2 - 1) * (f + b + b - 3 * w);
        EXPECT_NEAR(compute_only_step(*one, p, m, f, b, w) - work, (p - 1) * (f + b), 1e-9) << "p=" << p;
        EXPECT_NEAR(paired_step(*s, p, m, f, b, w) - work, dual, 1e-9) << "p=" << p << " m=" << m << " f=" << f;
        // With the pair's forward leaving as soon as it ends, as the task graph runs it, the bubble is smaller.
        EXPECT_LE(compute_only_step(*s, p, m, f, b, w) - work, dual + 1e-9) << "p=" << p << " m=" << m;
      }
}

TEST(DualPipe, BuildsAndRunsOnTheTaskGraph)
{
  // Every device: forward 1 s, backward 2 s (weight 1 s) a microbatch over its two stages, no communication.
  auto s = dualpipe_schedule();
  for (int p : {2, 4}) {
    const int m = 2 * p;
    std::vector<int> hosts(p);
    for (int d = 0; d < p; ++d)
      hosts[d] = d;
    cs::StageCost c;
    c.forward_s = 1.0;
    c.backward_s = 2.0;
    c.weight_s = 1.0;
    const auto built = cs::build_pipeline(*s, p, 1, m, std::vector<cs::StageCost>(2 * p, c), hosts);
    const double t = cs::run_analytical(built.graph, cs::testing::one_h100_node(p)).makespan;
    EXPECT_NEAR(t, compute_only_step(*s, p, m, 1.0, 2.0, 1.0), 1e-9) << "p=" << p;
  }
}

TEST(DualPipe, RefusesShapesItCannotRun)
{
  auto s = dualpipe_schedule();
  EXPECT_FALSE(s->devices_problem(3).empty());
  EXPECT_TRUE(s->devices_problem(4).empty());
  EXPECT_THROW(s->order(3, 2, 12), std::invalid_argument); // pp odd
  EXPECT_THROW(s->order(4, 2, 9), std::invalid_argument);  // microbatches odd
  EXPECT_THROW(s->order(4, 2, 6), std::invalid_argument);  // fewer than 2 pp
  EXPECT_THROW(s->order(4, 1, 8), std::invalid_argument);  // one chunk
}
