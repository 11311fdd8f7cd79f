#include "sim/plan/pipeline_bound.hpp"
#include "sim/plan/zero3_bound.hpp"

#include "base/registry.hpp"
#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "tests/test_models.hpp"
#include "tests/test_support.hpp"
#include "tests/training_helpers.hpp"
#include "workloads/training/stage_costs.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <optional>

namespace {

using cs::testing::h100;

struct BoundFixture {
  cs::TrainingParams w;
  std::unique_ptr<cs::KernelCostModel> cost = cs::make_cost_model(h100(), *cs::builtin_profile("h100-sxm5"));
  cs::PlatformSpec platform;

  BoundFixture()
  {
    w.model = cs::testing::model(8, 1024, 4096, 8, 512, 32000, "bf16", "none");
    w.batch = cs::BatchParams{8, 2};
    w.parallel.pp = 4;
    w.parallel.dp = 2;
    cs::ClusterParams c;
    c.nodes = 1;
    c.gpus_per_node = 8;
    c.network.latency = cs::Seconds{1e-6};
    platform = cs::build_platform_spec(c, h100());
  }
  cs::Plan plan(const std::string& schedule) const
  {
    cs::Plan p;
    p.parallel.dp = 2;
    p.parallel.pp = 4;
    p.micro = 2;
    p.schedule = schedule;
    return p;
  }
  double bound(const std::string& schedule, int microbatches) const
  {
    return cs::pipeline_compute_bound(w, plan(schedule), {}, *cost, platform, microbatches);
  }
};

// Every registered schedule at 4, 8 and 12 microbatches: `visit(name, plan, order)` with the fixture's plan for it,
// `chunks` asked of the schedule (its own, or what it makes of them), where it can run them on 4 devices.
void for_each_schedule(const BoundFixture& f, int chunks,
                       const std::function<void(const std::string&, cs::Plan&,
                                                const std::vector<std::vector<cs::PipelineOp>>&, int)>& visit)
{
  const auto& registry = cs::Registry<cs::PipelineSchedule>::instance();
  for (const auto& name : registry.names()) {
    auto schedule = registry.create(name);
    for (int m : {4, 8, 12}) {
      cs::Plan p = f.plan(name);
      p.parallel.vpp = schedule->chunks(chunks);
      std::vector<std::vector<cs::PipelineOp>> order;
      try {
        order = schedule->order(p.parallel.pp, p.parallel.vpp, m);
      } catch (const std::invalid_argument&) {
        continue; // a schedule that cannot run m microbatches on 4 devices
      }
      visit(name + " m " + std::to_string(m), p, order, m);
    }
  }
}

} // namespace

TEST(PipelineBound, SeesThePipelinesFillAndDrainThatTheAverageDeviceDoesNot)
{
  const BoundFixture f;
  const int m = 4, pp = 4;
  const auto set = cs::transformer_stages(f.w, *f.cost, f.platform, cs::testing::stage_shape(f.w, 1, pp));
  double slowest = 0, shortest = 1e300, total = 0;
  for (const auto& s : set.stages) {
    slowest = std::max(slowest, s.forward_s + s.backward_s);
    shortest = std::min(shortest, s.forward_s + s.backward_s);
    total += s.forward_s + s.backward_s;
  }
  // 1F1B from idle: the last microbatch's backward reaches the first device m + pp - 1 stage-passes after it began.
  const double one_f_one_b = f.bound("1f1b", m);
  EXPECT_GE(one_f_one_b, (m + pp - 1) * shortest);
  EXPECT_GT(one_f_one_b, 1.5 * m * total / pp); // the average device's compute, which the bound used to be
  // The zero-bubble schedule fills the drain with deferred weight passes: a smaller bound, still above the busiest
  // device's compute.
  const double zero_bubble = f.bound("zb-h1", m);
  EXPECT_LT(zero_bubble, one_f_one_b);
  EXPECT_GE(zero_bubble, m * slowest);
}

TEST(PipelineBound, AddsTheOptimizerStepAndTheRoutedExperts)
{
  BoundFixture f;
  const double dense = f.bound("1f1b", 4);
  // ZeRO shards the optimizer step over dp = 2: a shorter step.
  cs::Plan sharded = f.plan("1f1b");
  sharded.parallel.zero = 1;
  EXPECT_LT(cs::pipeline_compute_bound(f.w, sharded, {}, *f.cost, f.platform, 4), dense);
  // An MoE layer adds the experts the planner prices for it to each of its passes.
  f.w.model.moe.experts = 8;
  f.w.model.moe.top_k = 2;
  cs::PieceTimes experts;
  experts.forward = 1e-3;
  experts.backward = 2e-3;
  const double without = cs::pipeline_compute_bound(f.w, f.plan("1f1b"), {}, *f.cost, f.platform, 4);
  EXPECT_GT(cs::pipeline_compute_bound(f.w, f.plan("1f1b"), experts, *f.cost, f.platform, 4), without + 4 * 3e-3);
}

TEST(PipelineBound, AddsTheAllToAllsWhereNothingHidesThem)
{
  BoundFixture f;
  f.w.model.moe.experts = 8;
  f.w.model.moe.top_k = 2;
  cs::Plan plan = f.plan("1f1b");
  plan.parallel.ep = 2;
  // ep 2 over two replicas: every token routed to the other rank's experts crosses NVLink, there and back.
  const double alltoall = cs::exposed_alltoall_seconds(f.w, plan, f.platform);
  const double bytes = 2.0 * 512 * 2 / 2 * 1024 * 2; // micro x seq x top_k / ep x hidden x bf16, to the other rank
  EXPECT_GT(alltoall, bytes / f.platform.topology.route_bandwidth(0, 1));
  // Hidden by Megatron-Core's combined 1F1B, by shared experts beside them, or by a schedule that pairs passes.
  auto overlapped = f.w;
  overlapped.framework.overlap_moe_expert_parallel_comm = true;
  EXPECT_EQ(cs::exposed_alltoall_seconds(overlapped, plan, f.platform), 0.0);
  // Exposed, four a device's each layer and microbatch (dispatch and combine, both passes): 2 layers x 4 microbatches.
  EXPECT_GE(cs::pipeline_compute_bound(f.w, plan, {}, *f.cost, f.platform, 4),
            cs::pipeline_compute_bound(overlapped, plan, {}, *f.cost, f.platform, 4) + 2 * 4 * 4 * alltoall);
  overlapped = f.w;
  overlapped.framework.moe_shared_expert_overlap = true;
  EXPECT_EQ(cs::exposed_alltoall_seconds(overlapped, plan, f.platform), 0.0);
  cs::Plan paired = plan;
  paired.schedule = "dualpipev";
  paired.parallel.vpp = 2;
  EXPECT_EQ(cs::exposed_alltoall_seconds(f.w, paired, f.platform), 0.0);
  // DualPipeV pairs most passes, but its warm-up and cool-down ops run alone: those pay the dispatch and combine.
  EXPECT_EQ(cs::unpaired_alltoall_seconds(f.w, paired, alltoall), 2 * alltoall);
  EXPECT_EQ(cs::unpaired_alltoall_seconds(overlapped, paired, alltoall), 0.0); // shared experts hide them
  EXPECT_EQ(cs::unpaired_alltoall_seconds(f.w, plan, alltoall), 0.0);          // 1F1B's passes carry them already
  const cs::StageSet set = cs::bound_stages(f.w, paired, *f.cost, f.platform);
  EXPECT_GT(cs::pipeline_compute_bound(f.w, paired, set, {}, *f.cost, f.platform, 8, alltoall),
            cs::pipeline_compute_bound(f.w, paired, set, {}, *f.cost, f.platform, 8, 0.0) + 2 * alltoall);
  // The work bound carries them too, and stays below the timeline with them.
  auto schedule = cs::Registry<cs::PipelineSchedule>::instance().create("dualpipev");
  const auto counts = cs::pass_counts(schedule->order(4, 2, 8), set.map);
  const double work = cs::pipeline_work_bound(f.w, paired, set, {}, *f.cost, counts, alltoall);
  EXPECT_GT(work, cs::pipeline_work_bound(f.w, paired, set, {}, *f.cost, counts, 0.0) + 2 * alltoall);
  EXPECT_LE(work, cs::pipeline_compute_bound(f.w, paired, set, {}, *f.cost, f.platform, 8, alltoall) * (1 + 1e-12));
  plan.parallel.ep = 1;
  EXPECT_EQ(cs::exposed_alltoall_seconds(f.w, plan, f.platform), 0.0);
}

TEST(PipelineBound, TheWorkBoundIsNeverAboveTheTimelineBound)
{
  // The planner sorts by the work bound and works out the timeline only for the plans it reaches: pruning by it is
  // safe only if it never exceeds the timeline bound, for every schedule, microbatch count and stage map.
  const BoundFixture f;
  int checked = 0;
  for_each_schedule(f, 2, [&](const std::string& label, cs::Plan& p, const auto& order, int m) {
    const cs::StageSet set = cs::bound_stages(f.w, p, *f.cost, f.platform);
    const double work = cs::pipeline_work_bound(f.w, p, set, {}, *f.cost, cs::pass_counts(order, set.map), 0.0);
    const double timeline = cs::pipeline_compute_bound(f.w, p, set, {}, *f.cost, f.platform, m, 0.0);
    EXPECT_GT(work, 0.0) << label;
    EXPECT_LE(work, timeline * (1 + 1e-12)) << label;
    ++checked;
  });
  EXPECT_GE(checked, 12);
}

TEST(PipelineBound, AChainsWorkBoundSeesItsMostLoadedDeviceAndStaysBelowTheTimeline)
{
  // A memory-bound partition leaves the first stages one layer and the last four: the least work any device does is
  // far below the step, which the most loaded device sets. Where the order runs as a chain (1F1B, GPipe) the work
  // bound counts that device, its fill and its tail, and stays below the timeline; ZeRO-1 adds gathers to the tails.
  BoundFixture f;
  f.w.parallel.stage_layers = {1, 1, 2, 4};
  f.w.parallel.zero = 1;
  // A chain plan's least work, chain bound and timeline with ZeRO-1's gathers; none where the plan's stages do not
  // match the partition or its order is not a chain.
  auto bounds = [&f](cs::Plan& p, const std::vector<std::vector<cs::PipelineOp>>& order,
                     int m) -> std::optional<std::array<double, 3>> {
    p.parallel.zero = 1;
    p.stage_layers = f.w.parallel.stage_layers;
    cs::StageSet set;
    try {
      set = cs::bound_stages(f.w, p, *f.cost, f.platform);
    } catch (const std::invalid_argument&) {
      return std::nullopt; // the partition is for another stage count (DualPipe: two copies of four stages)
    }
    const auto shape = cs::chain_shape(order, set.map);
    if (!shape)
      return std::nullopt;
    const auto counts = cs::pass_counts(order, set.map);
    const cs::ChainBound bound{*shape, cs::zero12_gather_seconds(f.w, p, set, f.platform)};
    EXPECT_EQ(bound.gathers.size(), 4u);
    return std::array<double, 3>{cs::pipeline_work_bound(f.w, p, set, {}, *f.cost, counts, 0.0),
                                 cs::pipeline_work_bound(f.w, p, set, {}, *f.cost, counts, 0.0, {}, &bound),
                                 cs::pipeline_compute_bound(f.w, p, set, {}, *f.cost, f.platform, m, 0.0)};
  };
  int chains = 0;
  for_each_schedule(f, 1, [&](const std::string& label, cs::Plan& p, const auto& order, int m) {
    if (const auto b = bounds(p, order, m)) {
      ++chains;
      const auto [least, chain, timeline] = *b;
      EXPECT_GT(chain, 2.5 * least) << label; // four layers against one
      EXPECT_LE(chain, timeline * (1 + 1e-12)) << label;
    }
  });
  EXPECT_GE(chains, 9); // 1F1B, GPipe and ZB-H1 at each m
  // Two chunks a device, a layer a stage: interleaved 1F1B and DualPipeV run as chains too, and stay below the
  // timeline (DualPipeV's paired ops included).
  f.w.parallel.stage_layers = std::vector<int>(8, 1);
  int two_chunk_chains = 0;
  for_each_schedule(f, 2, [&](const std::string& label, cs::Plan& p, const auto& order, int m) {
    if (const auto b = bounds(p, order, m)) {
      ++two_chunk_chains;
      const auto [least, chain, timeline] = *b;
      EXPECT_GE(chain, least) << label;
      EXPECT_LE(chain, timeline * (1 + 1e-12)) << label;
    }
  });
  EXPECT_GE(two_chunk_chains, 4);
  // ZB-H1 and DualPipeV end with weight passes after the last gradient pass, the first device with the most.
  const auto& registry = cs::Registry<cs::PipelineSchedule>::instance();
  for (const auto& [name, v] : {std::pair<std::string, int>{"zb-h1", 1}, {"dualpipev", 2}}) {
    const auto schedule = registry.create(name);
    const auto shape = cs::chain_shape(schedule->order(4, v, 8), schedule->stage_map(4, v));
    ASSERT_TRUE(shape) << name;
    EXPECT_FALSE(shape->trailing_weight_stages.front().empty()) << name;
  }
  for (const auto& [name, v] : {std::pair<std::string, int>{"1f1b", 1}, {"interleaved-1f1b", 2}}) {
    const auto schedule = registry.create(name);
    const auto shape = cs::chain_shape(schedule->order(4, v, 8), schedule->stage_map(4, v));
    ASSERT_TRUE(shape) << name;
    for (const auto& trailing : shape->trailing_weight_stages)
      EXPECT_TRUE(trailing.empty()) << name;
  }
  // DualPipe runs two chains, one each way: no chain bound.
  const auto dualpipe = registry.create("dualpipe");
  EXPECT_FALSE(cs::chain_shape(dualpipe->order(4, 2, 8), dualpipe->stage_map(4, 2)));
}
