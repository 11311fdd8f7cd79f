// The planner's bounding shared with a forked child: every index done once, the child's lines back by index, what
// the child leaves undone done here, and the search the same split or not.
#include "sim/plan/plan_candidate.hpp"
#include "sim/plan/planner.hpp"
#include "sim/plan/split_loop.hpp"

#include "sim/run/scenario_checks.hpp"
#include "sim/run/scenario_run.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <vector>

TEST(SplitLoop, EveryIndexIsDoneOnceHereOrThere)
{
  const std::size_t n = 2000; // four blocks: two here, two in the child
  std::vector<int> done_here(n, 0);
  const auto lines = cs::split_loop(
      n, true, [&](std::size_t i) { ++done_here[i]; }, [](std::size_t i) { return "line " + std::to_string(i * i); });
  std::size_t there = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (lines[i]) {
      EXPECT_EQ(done_here[i], 0) << i;
      EXPECT_EQ(*lines[i], "line " + std::to_string(i * i)) << i;
      ++there;
    } else {
      EXPECT_EQ(done_here[i], 1) << i;
    }
  }
  EXPECT_EQ(there, 976u); // indices 512-1023 and 1536-1999
  // Not split: all here, nothing back.
  std::vector<int> all(n, 0);
  const auto none = cs::split_loop(
      n, false, [&](std::size_t i) { ++all[i]; }, [](std::size_t) { return ""; });
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(all[i], 1);
    EXPECT_FALSE(none[i]);
  }
}

TEST(SplitLoop, WhatTheChildCannotDoIsDoneHere)
{
  // The child fails on some indices (an exception: no line); the parent runs them, once.
  const std::size_t n = 1100;
  std::vector<int> done_here(n, 0);
  const auto lines = cs::split_loop(
      n, true, [&](std::size_t i) { ++done_here[i]; },
      [](std::size_t i) -> std::string {
        if (i % 7 == 0)
          throw std::runtime_error("no");
        return "ok";
      });
  for (std::size_t i = 0; i < n; ++i) {
    const bool child = i / 512 % 2 == 1;
    EXPECT_EQ(done_here[i], child && i % 7 != 0 ? 0 : 1) << i;
    EXPECT_EQ(lines[i].has_value(), child && i % 7 != 0) << i;
  }
}

TEST(SplitLoop, ACandidateComesBackExactly)
{
  cs::Candidate c;
  c.plan.parallel.dp = 4;
  c.plan.parallel.tp = 2;
  c.plan.parallel.pp = 2;
  c.plan.schedule = "1f1b";
  c.plan.stage_layers = {3, 5};
  c.plan.recompute_modules = {"layernorm", "moe_act"};
  c.plan.bound_s = 1.0 / 3.0;
  c.plan.memory_bytes = 7.123456789e10;
  c.experts = {0.1, 0.2 / 7, 1e-9 / 3, "gemm-waves"};
  c.microbatches = 17;
  c.recomputes_nothing = true;
  const cs::Candidate back = cs::candidate_from_line(cs::candidate_line(c));
  EXPECT_EQ(back.plan.bound_s, c.plan.bound_s);
  EXPECT_EQ(back.plan.memory_bytes, c.plan.memory_bytes);
  EXPECT_EQ(back.plan.stage_layers, c.plan.stage_layers);
  EXPECT_EQ(back.plan.recompute_modules, c.plan.recompute_modules);
  EXPECT_EQ(back.plan.parallel.tp, 2);
  EXPECT_EQ(back.experts.backward, c.experts.backward);
  EXPECT_EQ(back.experts.weight, c.experts.weight);
  EXPECT_EQ(back.experts.model, "gemm-waves");
  EXPECT_EQ(back.microbatches, 17);
  EXPECT_TRUE(back.recomputes_nothing);
  EXPECT_ANY_THROW(cs::candidate_from_line("{\"plan\": 1"));
}

TEST(SplitLoop, ThePlannersSearchIsTheSameSplitOrNot)
{
  // The quickstart on 64 GPUs with recompute modules searched: 9,947 plans, bounded in one process or two.
  cs::Scenario base = cs::load_scenario(cs::testing::src("scenarios/quickstart.yaml"), {});
  cs::check_scenario(base);
  cs::PlanOptions one;
  one.gpus = 64;
  one.top = 5;
  one.jobs = 2;
  one.search_recompute_modules = true;
  one.split_bounding_from = 1u << 30;
  cs::PlanOptions two = one;
  two.split_bounding_from = 1;
  const cs::PlanSearch a = cs::search_plans(base, one), b = cs::search_plans(base, two);
  EXPECT_GT(a.enumerated, 2048);
  EXPECT_EQ(a.enumerated, b.enumerated);
  EXPECT_EQ(a.invalid, b.invalid);
  EXPECT_EQ(a.over_memory, b.over_memory);
  EXPECT_EQ(a.timeline_bounded, b.timeline_bounded);
  EXPECT_EQ(a.simulated, b.simulated);
  EXPECT_EQ(a.pruned_by_bound, b.pruned_by_bound);
  ASSERT_EQ(a.best.size(), b.best.size());
  for (std::size_t i = 0; i < a.best.size(); ++i) {
    EXPECT_EQ(a.best[i].iteration_s, b.best[i].iteration_s) << i;
    EXPECT_EQ(a.best[i].bound_s, b.best[i].bound_s) << i;
    EXPECT_EQ(a.best[i].memory_bytes, b.best[i].memory_bytes) << i;
    EXPECT_EQ(a.best[i].stage_layers, b.best[i].stage_layers) << i;
  }
}
