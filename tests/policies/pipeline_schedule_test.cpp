// validation.md §1 exact checks: bubbles and activations in flight of gpipe, 1f1b and interleaved-1f1b.
#include "base/registry.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/isolated_run.hpp"
#include "tests/policies/two_chunk_order.hpp"
#include "tests/training_helpers.hpp"
#include "workloads/training/pipeline_graph.hpp"

#include <gtest/gtest.h>

namespace {
cs::StageCost stage_cost(double forward_s, double backward_s, double activation_bytes)
{
  cs::StageCost c;
  c.forward_s = forward_s;
  c.backward_s = backward_s;
  c.activation_bytes = activation_bytes;
  return c;
}
} // namespace

namespace {

cs::PlatformSpec devices(int n) { return cs::testing::one_h100_node(n); }

// Uniform stages, no communication: every device does forward 1 s and backward 2 s per microbatch in total.
cs::PipelineGraph uniform(const std::string& name, int p, int v, int m)
{
  auto schedule = cs::Registry<cs::PipelineSchedule>::instance().create(name);
  const int chunks = schedule->chunks(v);
  std::vector<cs::StageCost> costs(p * chunks, stage_cost(1.0 / chunks, 2.0 / chunks, 0));
  std::vector<int> hosts(p);
  for (int d = 0; d < p; ++d)
    hosts[d] = d;
  return cs::build_pipeline(*schedule, p, v, m, costs, hosts);
}

} // namespace

TEST(PipelineSchedules, GpipeAnd1f1bBubbleIsPMinusOneOverM)
{
  for (const char* name : {"gpipe", "1f1b"})
    for (int p : {2, 4, 8})
      for (int m : {8, 16, 32}) {
        auto pipe = uniform(name, p, 1, m);
        double t = cs::run_analytical(pipe.graph, devices(p)).makespan;
        EXPECT_NEAR(cs::bubble_fraction(pipe, t), double(p - 1) / m, 1e-9) << name << " p=" << p << " m=" << m;
      }
}

TEST(PipelineSchedules, InterleavedBubbleIsPMinusOneOverVM)
{
  for (int p : {2, 4, 8})
    for (int v : {2, 3, 4})
      for (int m : {8, 16}) {
        if (m % p != 0)
          continue;
        auto pipe = uniform("interleaved-1f1b", p, v, m);
        double t = cs::run_analytical(pipe.graph, devices(p)).makespan;
        EXPECT_NEAR(cs::bubble_fraction(pipe, t), double(p - 1) / (v * m), 1e-9)
            << "p=" << p << " v=" << v << " m=" << m;
      }
}

TEST(PipelineSchedules, ZeroBubbleH1CutsTheBubbleToAThirdAtTheSameMemory)
{
  // Qi et al. (ICLR 2024): with forward, input-gradient and weight-gradient passes of equal length T, 1F1B idles
  // (p - 1)(T_F + T_B + T_W) = 3 (p - 1) T per device and ZB-H1 (p - 1)(T_F + T_B - T_W) = (p - 1) T, holding at
  // most p microbatches of activations like 1F1B.
  for (int p : {2, 4, 8})
    for (int m : {8, 16, 24}) {
      auto make = [&](const char* name) {
        auto schedule = cs::Registry<cs::PipelineSchedule>::instance().create(name);
        cs::StageCost c = stage_cost(1.0, 2.0, 0);
        c.weight_s = 1.0;
        std::vector<int> hosts(p);
        for (int d = 0; d < p; ++d)
          hosts[d] = d;
        return cs::build_pipeline(*schedule, p, 1, m, std::vector<cs::StageCost>(p, c), hosts);
      };
      const auto zb = make("zb-h1"), one = make("1f1b");
      const double t_zb = cs::run_analytical(zb.graph, devices(p)).makespan;
      const double t_one = cs::run_analytical(one.graph, devices(p)).makespan;
      EXPECT_NEAR(t_one, 3.0 * m + 3.0 * (p - 1), 1e-9) << "p=" << p << " m=" << m;
      EXPECT_NEAR(t_zb, 3.0 * m + 1.0 * (p - 1), 1e-9) << "p=" << p << " m=" << m;
      const auto held = cs::peak_in_flight(zb);
      for (int d = 0; d < p; ++d)
        EXPECT_LE(held[d], p) << "device " << d;
      EXPECT_EQ(held[0], cs::peak_in_flight(one)[0]);
    }
}

TEST(PipelineSchedules, ActivationsInFlight)
{
  const int p = 4, m = 16;
  auto one = cs::peak_in_flight(uniform("1f1b", p, 1, m));
  auto gpipe = cs::peak_in_flight(uniform("gpipe", p, 1, m));
  for (int s = 0; s < p; ++s) {
    EXPECT_EQ(one[s], p - s) << s;
    EXPECT_EQ(gpipe[s], m) << s;
  }
}

TEST(PipelineSchedules, BothBackendsGiveTheUniformMakespan)
{
  auto pipe = uniform("interleaved-1f1b", 4, 2, 8);
  auto p = devices(4);
  const double expected = 8 * 3.0 + 3 * 3.0 / 2; // m (f + b) + (p - 1)(f + b) / v
  EXPECT_NEAR(cs::run_analytical(pipe.graph, p).makespan, expected, 1e-9);
  double simgrid = std::stod(cs::run_isolated([&] { return std::to_string(cs::run_simgrid(pipe.graph, p).makespan); }));
  EXPECT_NEAR(simgrid, expected, 1e-5);
}

TEST(PipelineSchedules, ActivationTransfersDelayTheNextStage)
{
  // 2 devices, 1 microbatch, a 1 GB activation over 370.8 GB/s NVLink (plus 1.2 us latency) each way.
  auto schedule = cs::Registry<cs::PipelineSchedule>::instance().create("1f1b");
  std::vector<cs::StageCost> costs(2, stage_cost(1.0, 2.0, 1e9));
  auto pipe = cs::build_pipeline(*schedule, 2, 1, 1, costs, {0, 1});
  const double hop = 1.2e-6 + 1e9 / 370.8e9;
  EXPECT_NEAR(cs::run_analytical(pipe.graph, devices(2)).makespan, 1 + hop + 1 + 2 + hop + 2, 1e-9);
}

TEST(PipelineSchedules, InterleavingNeedsMicrobatchesDivisibleByStages)
{
  EXPECT_THROW(uniform("interleaved-1f1b", 4, 2, 6), std::invalid_argument);
  EXPECT_TRUE(cs::Registry<cs::PipelineSchedule>::instance().has("gpipe"));
  EXPECT_TRUE(cs::Registry<cs::PipelineSchedule>::instance().has("1f1b"));
  EXPECT_TRUE(cs::Registry<cs::PipelineSchedule>::instance().has("interleaved-1f1b"));
}

namespace {

// A diamond of 4 stages: 0 feeds two branches (1 and 2) that join in 3. Uniform stages, forward 1 s, backward
// 2 s, no communication.
std::vector<cs::StageCost> diamond()
{
  std::vector<cs::StageCost> costs(4, stage_cost(1.0, 2.0, 0));
  costs[0].successors = {1, 2};
  costs[1].successors = {3};
  costs[2].successors = {3};
  costs[0].successor_bytes = {0, 0};
  return costs;
}

} // namespace

TEST(PipelineSchedules, GraphPipelineOnAChainIs1f1b)
{
  for (int p : {2, 4})
    for (int m : {4, 8}) {
      auto a = uniform("graph-pipeline", p, 1, m), b = uniform("1f1b", p, 1, m);
      EXPECT_EQ(cs::peak_in_flight(a), cs::peak_in_flight(b));
      EXPECT_DOUBLE_EQ(cs::run_analytical(a.graph, devices(p)).makespan,
                       cs::run_analytical(b.graph, devices(p)).makespan);
    }
}

TEST(PipelineSchedules, TwoBranchGraphPipelineBeatsTheSameStagesAsAChain)
{
  auto graph = cs::Registry<cs::PipelineSchedule>::instance().create("graph-pipeline");
  auto chain = cs::Registry<cs::PipelineSchedule>::instance().create("1f1b");
  const std::vector<int> hosts{0, 1, 2, 3};
  const int m = 8;
  auto dag = cs::build_pipeline(*graph, 4, 1, m, diamond(), hosts);
  auto line = cs::build_pipeline(*chain, 4, 1, m, std::vector<cs::StageCost>(4, stage_cost(1.0, 2.0, 0)), hosts);
  const double t_dag = cs::run_analytical(dag.graph, devices(4)).makespan;
  const double t_line = cs::run_analytical(line.graph, devices(4)).makespan;
  // The chain's depth is 4 stages, the diamond's 3: (m + 3)(f + b) against (m + 2)(f + b).
  EXPECT_DOUBLE_EQ(t_line, (m + 3) * 3.0);
  EXPECT_DOUBLE_EQ(t_dag, (m + 2) * 3.0);
  EXPECT_NEAR(cs::bubble_fraction(dag, t_dag), 2.0 / m, 1e-12);
  // Activations held: depth + 1 per stage (3, 2, 2, 1) instead of p - s (4, 3, 2, 1).
  EXPECT_EQ(cs::peak_in_flight(dag), (std::vector<int>{3, 2, 2, 1}));
  // The simgrid backend agrees.
  auto p = devices(4);
  double simgrid = std::stod(cs::run_isolated([&] { return std::to_string(cs::run_simgrid(dag.graph, p).makespan); }));
  EXPECT_NEAR(simgrid, t_dag, 1e-5);
}

TEST(PipelineSchedules, GraphPipelineSendsActivationsAlongEveryEdge)
{
  auto graph = cs::Registry<cs::PipelineSchedule>::instance().create("graph-pipeline");
  auto costs = diamond();
  costs[0].successor_bytes = {1e9, 2e9};
  costs[1].successor_bytes = {3e9};
  costs[2].successor_bytes = {4e9};
  auto pipe = cs::build_pipeline(*graph, 4, 1, 2, costs, {0, 1, 2, 3});
  double bytes = 0;
  int transfers = 0;
  for (const auto& t : pipe.graph.tasks())
    if (t.kind == cs::TaskKind::TRANSFER) {
      bytes += t.bytes;
      ++transfers;
    }
  // Per microbatch each of the 4 edges carries its activations forward and their gradient back.
  EXPECT_EQ(transfers, 2 * 4 * 2);
  EXPECT_DOUBLE_EQ(bytes, 2 * 2 * (1e9 + 2e9 + 3e9 + 4e9));
  EXPECT_GT(cs::run_analytical(pipe.graph, devices(4)).makespan, 2 * 3.0 + 2 * 3.0);
}

TEST(PipelineSchedules, ChainSchedulesRefuseBranchingStages)
{
  for (const char* name : {"gpipe", "1f1b"}) {
    auto s = cs::Registry<cs::PipelineSchedule>::instance().create(name);
    EXPECT_THROW(cs::build_pipeline(*s, 4, 1, 8, diamond(), {0, 1, 2, 3}), std::invalid_argument) << name;
  }
  auto g = cs::Registry<cs::PipelineSchedule>::instance().create("graph-pipeline");
  auto backwards = diamond();
  backwards[2].successors = {1}; // an edge to a lower stage number
  EXPECT_THROW(cs::build_pipeline(*g, 4, 1, 8, backwards, {0, 1, 2, 3}), std::invalid_argument);
}

TEST(PipelineSchedules, CombinedOneFOneBPairsEachBackwardWithTheNextForward)
{
  // Megatron-Core's combined 1F1B without pipelining: F0, then F(i+1) with B(i), then the last B alone. Its schedule
  // plan runs the pair a layer at a time and frees each backward layer after it, so the pair holds one microbatch
  // (and the layer the memory model adds), not two.
  auto order = cs::Registry<cs::PipelineSchedule>::instance().create("1f1b")->order(1, 1, 4);
  cs::pair_backward_with_next_forward(order);
  const auto& ops = order[0];
  ASSERT_EQ(ops.size(), 8u);
  EXPECT_EQ(ops[0].overlap, cs::Overlap::NONE);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ops[1 + 2 * i].pass, cs::Pass::BACKWARD);
    EXPECT_EQ(ops[1 + 2 * i].microbatch, i);
    EXPECT_EQ(ops[1 + 2 * i].overlap, cs::Overlap::WITH_NEXT);
    EXPECT_TRUE(ops[1 + 2 * i].frees_by_layer && ops[2 + 2 * i].frees_by_layer);
    EXPECT_EQ(ops[2 + 2 * i].microbatch, i + 1);
    EXPECT_EQ(ops[2 + 2 * i].overlap, cs::Overlap::WITH_PREVIOUS);
  }
  EXPECT_EQ(ops[7].overlap, cs::Overlap::NONE);
  EXPECT_EQ(cs::peak_in_flight(order), (std::vector<int>{1}));
  // A pair that allocates its forward before freeing its backward (DualPipe's accounting) holds both.
  for (auto& op : order[0])
    op.frees_by_layer = false;
  EXPECT_EQ(cs::peak_in_flight(order), (std::vector<int>{2}));
  // Interleaved: each steady-state backward pairs with the forward after it; freed by layer, no chunk more.
  auto interleaved = cs::Registry<cs::PipelineSchedule>::instance().create("interleaved-1f1b")->order(4, 2, 8);
  const auto before = cs::peak_in_flight(interleaved);
  cs::pair_backward_with_next_forward(interleaved);
  EXPECT_EQ(cs::peak_in_flight(interleaved), before);
}

TEST(PipelineSchedules, DualPipeVRunsEveryPassOnceInAVAndBeats1f1b)
{
  auto v = cs::Registry<cs::PipelineSchedule>::instance().create("dualpipev");
  EXPECT_EQ(v->chunks(1), 2);
  const auto map = v->stage_map(4, 2);
  EXPECT_EQ(map.stage(0, 0), 0);
  EXPECT_EQ(map.stage(0, 1), 7); // device 0 holds the first and the last stage
  EXPECT_EQ(map.stage(3, 1), 4);
  for (int p : {2, 4, 8})
    for (int m : {2 * p, 2 * p + 3, 4 * p}) {
      const auto order = v->order(p, 2, m);
      for (int d = 0; d < p; ++d)
        cs::testing::expect_two_chunk_order(order[d], {0, 0}, m, d);
      // Forward 1 s, input gradient 1 s, weight gradient 1 s a device per microbatch, over 2p stages; 1F1B runs the
      // same layers as p stages. Without communication to hide, DualPipeV's gain is its shorter ramp.
      std::vector<int> hosts(p);
      for (int d = 0; d < p; ++d)
        hosts[d] = d;
      cs::StageCost half = stage_cost(0.5, 1.0, 0), whole = stage_cost(1.0, 2.0, 0);
      half.weight_s = 0.5;
      whole.weight_s = 1.0;
      auto dual = cs::build_pipeline(*v, p, 1, m, std::vector<cs::StageCost>(2 * p, half), hosts);
      auto one = cs::build_pipeline(*cs::Registry<cs::PipelineSchedule>::instance().create("1f1b"), p, 1, m,
                                    std::vector<cs::StageCost>(p, whole), hosts);
      const double t_dual = cs::run_analytical(dual.graph, devices(p)).makespan;
      const double t_one = cs::run_analytical(one.graph, devices(p)).makespan;
      EXPECT_GE(t_dual, 3.0 * m - 1e-9) << "p=" << p << " m=" << m;
      EXPECT_LT(t_dual, t_one) << "p=" << p << " m=" << m;
      const auto held = cs::peak_in_flight(dual);
      for (int d = 0; d < p; ++d)
        EXPECT_LE(held[d], 2 * p + 2) << "p=" << p << " m=" << m << " device " << d;
    }
  EXPECT_THROW(v->order(4, 2, 7), std::invalid_argument); // fewer than 2 pp microbatches
}
