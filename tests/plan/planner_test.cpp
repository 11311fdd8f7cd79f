#include "sim/plan/own_plan.hpp"
#include "sim/plan/pipeline_bound.hpp"
#include "sim/plan/plan_enumeration.hpp"
#include "sim/plan/planner.hpp"
#include "sim/plan/search_bounds.hpp"
#include "sim/plan/simulation_pool.hpp"
#include "workloads/training/training_workload.hpp"

#include "core/common_metrics.hpp"
#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/run/scenario_run.hpp"
#include "tests/plan/every_plan.hpp"
#include "tests/test_support.hpp"

#include <csignal>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// A small GPT on one node of 8 H100: every plan simulates in milliseconds.
cs::Scenario small_gpt(int layers = 8, std::vector<std::string> sets = {})
{
  const std::string path = ::testing::TempDir() + "/cs_plan_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << R"(name: plan-test
backend: analytical
cluster:
  device: h100-sxm5
  nodes: 1
  gpus_per_node: 8
  intra_node: {kind: nvswitch}
  network: {kind: fat-tree, nic_bandwidth: 400Gb/s, nics_per_node: 8}
workload:
  kind: transformer-training
  model: {layers: 8, hidden: 1024, heads: 8, seq: 512, vocab: 32000, dtype: bf16}
  batch: {global: 32, micro: 2}
  iterations: 1
policies: {sync: ring-allreduce}
)";
  sets.push_back("workload.model.layers=" + std::to_string(layers));
  cs::Scenario s = cs::load_scenario(path, sets);
  cs::check_scenario(s);
  return s;
}

// Every plan of `base` on 8 GPUs simulated (no pruning), fastest first.
cs::PlanSearch every_plan(const cs::Scenario& base) { return cs::testing::every_plan(base, 8); }

// The iteration time of plan `p` of `base` on 8 GPUs run as its own scenario, two iterations, as the planner times it.
double own_run(const cs::Scenario& base, const cs::Plan& p)
{
  cs::Scenario s = cs::plan_scenario(base, 8, p);
  auto w = std::make_shared<cs::TrainingWorkload>(cs::workload_as<cs::TrainingWorkload>(s));
  w->params.iterations = 2;
  s.workload = w;
  cs::RunOptions estimate;
  estimate.replicas = cs::ReplicaMode::ESTIMATE;
  return cs::run_scenario(s, estimate).metrics.at(cs::metric::iteration_time_s);
}

} // namespace

TEST(Planner, TheBoundNeverExceedsTheSimulatedTimeAndPruningKeepsTheBest)
{
  const cs::Scenario base = small_gpt();
  const auto every = every_plan(base);
  ASSERT_GT(every.simulated, 50);
  EXPECT_GT(every.timed_as_twin, 0);
  EXPECT_EQ(every.enumerated, every.invalid + every.over_memory + every.simulated + every.timed_as_twin);
  for (const auto& p : every.best) {
    EXPECT_LE(p.bound_s, p.iteration_s * (1 + 1e-9))
        << p.parallel.dp << " " << p.parallel.tp << " " << p.parallel.pp << " " << p.schedule;
    EXPECT_EQ(p.parallel.dp * p.parallel.tp * p.parallel.pp, 8);
  }
  for (std::size_t i = 1; i < every.best.size(); ++i)
    EXPECT_LE(every.best[i - 1].iteration_s, every.best[i].iteration_s * (1 + 1e-9));
  // Branch and bound simulates fewer plans and finds the same best ones.
  cs::PlanOptions pruned;
  pruned.gpus = 8;
  pruned.top = 3;
  const auto few = cs::search_plans(base, pruned);
  EXPECT_LT(few.simulated, every.simulated);
  EXPECT_GT(few.pruned_by_bound, 0);
  ASSERT_EQ(few.best.size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_DOUBLE_EQ(few.best[i].iteration_s, every.best[i].iteration_s);
}

TEST(Planner, AZeroTwoPlanTimedAsItsTwinIsWhatItsOwnRunGives)
{
  // The planner gives a ZeRO-2 plan its ZeRO-1 twin's time: running the ZeRO-2 plan itself must give that time.
  const cs::Scenario base = small_gpt();
  const auto every = every_plan(base);
  int checked = 0;
  for (const auto& p : every.best) {
    if (p.parallel.zero != 2 || checked >= 3)
      continue;
    const double own = own_run(base, p);
    EXPECT_NEAR(own, p.iteration_s, 1e-12 * own) << p.parallel.dp << " " << p.parallel.tp << " " << p.parallel.pp;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// The plan with recompute none that `p` (selective) differs from only in its recomputation; nullptr if not listed.
const cs::Plan* without_recompute(const cs::PlanSearch& search, const cs::Plan& p)
{
  for (const auto& q : search.best)
    if (q.recompute == cs::Recompute::NONE && q.parallel.dp == p.parallel.dp && q.parallel.tp == p.parallel.tp &&
        q.parallel.pp == p.parallel.pp && q.parallel.vpp == p.parallel.vpp && q.parallel.zero == p.parallel.zero &&
        q.micro == p.micro && q.schedule == p.schedule && q.stage_layers == p.stage_layers &&
        q.parallel.sequence_parallel == p.parallel.sequence_parallel)
      return &q;
  return nullptr;
}

TEST(Planner, ASelectiveRecomputationThatRerunsNothingIsTimedAsThePlanWithout)
{
  // Under fused attention the attention core keeps no scores, so selective recomputation of it reruns nothing: the
  // planner times such a plan as the plan without recomputation, and running it must give that time.
  const cs::Scenario flash = small_gpt(8, {"workload.model.attention=flash"});
  const auto every = every_plan(flash);
  int checked = 0;
  for (const auto& p : every.best) {
    if (p.recompute != cs::Recompute::SELECTIVE || checked >= 3)
      continue;
    const cs::Plan* twin = without_recompute(every, p);
    ASSERT_NE(twin, nullptr);
    EXPECT_EQ(p.iteration_s, twin->iteration_s);
    const double own = own_run(flash, p);
    EXPECT_NEAR(own, p.iteration_s, 1e-12 * own) << p.parallel.dp << " " << p.parallel.tp << " " << p.parallel.pp;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
  // Materialised attention keeps its scores: recomputing the core reruns its kernels, a plan of its own.
  const auto kept = every_plan(small_gpt(8, {"workload.model.attention=materialized"}));
  EXPECT_GT(kept.simulated, every.simulated);
  int differ = 0;
  for (const auto& p : kept.best)
    if (p.recompute == cs::Recompute::SELECTIVE)
      if (const cs::Plan* twin = without_recompute(kept, p); twin && twin->iteration_s < p.iteration_s)
        ++differ;
  EXPECT_GT(differ, 0);
}

TEST(Planner, AMemoryBudgetRulesPlansOutAndShapesStages)
{
  const cs::Scenario base = small_gpt();
  cs::PlanOptions tiny;
  tiny.gpus = 8;
  tiny.memory_limit = 1e6;
  const auto none = cs::search_plans(base, tiny);
  EXPECT_TRUE(none.best.empty());
  EXPECT_EQ(none.over_memory + none.invalid, none.enumerated);
  // Every plan reported fits the budget, and pipeline plans carry a stage partition summing to the layers.
  cs::PlanOptions some;
  some.gpus = 8;
  some.top = 100000;
  some.exhaustive = true;
  some.memory_limit = 4e9;
  const auto fit = cs::search_plans(base, some);
  ASSERT_FALSE(fit.best.empty());
  bool pipelines = false;
  for (const auto& p : fit.best) {
    EXPECT_LE(p.memory_bytes, fit.budget_bytes);
    if (p.parallel.pp > 1 && p.parallel.vpp == 1) {
      pipelines = true;
      int sum = 0;
      for (int l : p.stage_layers)
        sum += l;
      EXPECT_EQ(sum, 8);
      EXPECT_EQ(static_cast<int>(p.stage_layers.size()), p.parallel.pp);
    }
  }
  EXPECT_TRUE(pipelines);
}

TEST(Planner, OneReplicaEstimatesAreCloseToTheFullGraph)
{
  // The planner simulates replica 0 with data-parallel collectives as closed forms; the full graph simulates all.
  const cs::Scenario base = small_gpt();
  for (auto [tp, pp, schedule] :
       {std::tuple{1, 1, ""}, std::tuple{2, 1, ""}, std::tuple{1, 2, "1f1b"}, std::tuple{2, 2, "gpipe"}}) {
    cs::Plan plan;
    plan.parallel.tp = tp;
    plan.parallel.pp = pp;
    plan.parallel.dp = 8 / (tp * pp);
    plan.micro = 2;
    plan.recompute = cs::Recompute::NONE;
    plan.schedule = schedule;
    plan.parallel.sequence_parallel = tp > 1;
    cs::Scenario s = cs::plan_scenario(base, 8, plan);
    cs::check_scenario(s);
    cs::RunOptions fast;
    fast.replicas = cs::ReplicaMode::ONE;
    const double estimate = cs::run_scenario(s, fast).report["metrics"]["iteration_time_s"].get<double>();
    const double full = cs::run_scenario(s, {}).report["metrics"]["iteration_time_s"].get<double>();
    EXPECT_NEAR(estimate / full, 1.0, 0.05) << "tp " << tp << " pp " << pp;
  }
}

TEST(Planner, RefusesWhatItCannotPlan)
{
  const cs::Scenario base = small_gpt();
  cs::PlanOptions bad;
  bad.gpus = 12; // not whole nodes of 8
  EXPECT_THROW(cs::search_plans(base, bad), std::invalid_argument);
  bad.gpus = 3; // not a divisor of a node
  EXPECT_THROW(cs::search_plans(base, bad), std::invalid_argument);
}

TEST(Planner, MemoryTightLlama70bPlanBeatsEveryPurePlan)
{
  // validation.md section 4: a Galvatron-style plan is never worse than the best pure DP / TP / PP plan, and more
  // than 1.2x better on a memory-tight case. Pure data parallelism with ZeRO-3 sharding is counted apart (it does not
  // fit here: the gradients accumulated over a replica's microbatches are held whole).
  cs::Scenario base =
      cs::load_scenario(std::string(CS_SOURCE_DIR) + "/scenarios/reference/galvatron-llama70b.yaml", {});
  cs::check_scenario(base);
  cs::PlanOptions all;
  all.gpus = 32;
  all.top = 100000;
  all.exhaustive = true;
  const auto plans = cs::search_plans(base, all);
  ASSERT_FALSE(plans.best.empty());
  const cs::Plan& best = plans.best.front();
  double pure = 1e300, pure_unsharded = 1e300;
  for (const auto& p : plans.best)
    if ((p.parallel.dp > 1) + (p.parallel.tp > 1) + (p.parallel.pp > 1) <= 1) {
      pure = std::min(pure, p.iteration_s);
      if (p.parallel.zero < 3)
        pure_unsharded = std::min(pure_unsharded, p.iteration_s);
    }
  ASSERT_LT(pure_unsharded, 1e300) << "some pure plan must fit";
  EXPECT_GE(pure / best.iteration_s, 1.0);
  EXPECT_GT(pure_unsharded / best.iteration_s, 1.2);
  std::printf("best %d x %d x %d: %.3f s; best pure %.3f s (x%.2f); best pure without ZeRO-3 %.3f s (x%.2f)\n",
              best.parallel.dp, best.parallel.tp, best.parallel.pp, best.iteration_s, pure, pure / best.iteration_s,
              pure_unsharded, pure_unsharded / best.iteration_s);
  // The reference scenario holds that plan.
  EXPECT_EQ(best.parallel.tp, cs::workload_as<cs::TrainingWorkload>(base).params.parallel.tp);
  EXPECT_EQ(best.parallel.pp, cs::workload_as<cs::TrainingWorkload>(base).params.parallel.pp);
}

TEST(Planner, MoePlansSearchExpertTensorParallelismToo)
{
  // Mixtral cut to 2 layers on 4 GPUs: under tp 2 and 4 the search also tries every smaller divisor of tp as etp (MoE
  // parallel folding, ep a multiple of tp / etp), and each such plan is a valid scenario.
  const cs::Scenario base = cs::load_scenario(std::string(CS_SOURCE_DIR) + "/scenarios/moe-mixtral.yaml",
                                              {"workload.model.layers=2", "workload.batch.global=16"});
  cs::PlanOptions o;
  o.gpus = 4;
  o.top = 1000;
  o.exhaustive = true;
  const cs::PlanSearch search = cs::search_plans(base, o);
  int folded = 0, partly = 0;
  for (const auto& p : search.best)
    if (p.parallel.etp < p.parallel.tp) {
      ++folded;
      partly += p.parallel.etp > 1 ? 1 : 0; // etp 2 under tp 4
      EXPECT_EQ(p.parallel.tp % p.parallel.etp, 0);
      EXPECT_EQ(p.parallel.ep % (p.parallel.tp / p.parallel.etp), 0);
      EXPECT_NO_THROW(cs::check_scenario(cs::plan_scenario(base, o.gpus, p)));
    }
  EXPECT_GT(folded, 0);
  EXPECT_GT(partly, 0);
}

TEST(Planner, LongSequencesSearchContextParallelismAndItWins)
{
  // Llama 3 8B at 32K tokens on two nodes: the search tries cp 2 to 16 beside tp, every such plan is a valid scenario
  // that writes its cp, and splitting the sequence beats the plans without it (activations of a 32K sequence per GPU).
  const cs::Scenario base = cs::load_scenario(
      std::string(CS_SOURCE_DIR) + "/scenarios/reference/nemo-llama3-8b-cp2-fp8.yaml",
      {"cluster.nodes=2", "workload.model.seq=32768", "workload.batch.global=16", "workload.parallel.cp=1"});
  cs::PlanOptions o;
  o.gpus = 16;
  o.top = 1000;
  o.exhaustive = true;
  const cs::PlanSearch search = cs::search_plans(base, o);
  ASSERT_FALSE(search.best.empty());
  std::set<int> degrees;
  for (const auto& p : search.best) {
    degrees.insert(p.parallel.cp);
    EXPECT_EQ(32768 % (2 * p.parallel.cp), 0);
  }
  EXPECT_TRUE(degrees.count(1) && degrees.count(2) && degrees.count(4)) << degrees.size();
  const cs::Plan& best = search.best.front();
  EXPECT_GT(best.parallel.cp, 1);
  EXPECT_NO_THROW(cs::check_scenario(cs::plan_scenario(base, o.gpus, best)));
  EXPECT_NE(cs::plan_scenario_yaml(base, o.gpus, best).find("cp: " + std::to_string(best.parallel.cp)),
            std::string::npos);
}

TEST(Planner, PlansExchangeKeysAsTheScenariosFrameworkDoes)
{
  // cp_comm is how the framework passes keys and values (torchtitan all-gathers them by default), not a choice the
  // search makes: every plan keeps the scenario's, and so a scenario's own context-parallel plan is in the tree.
  const cs::Scenario base = cs::load_scenario(
      std::string(CS_SOURCE_DIR) + "/scenarios/reference/nemo-llama3-8b-cp2-fp8.yaml",
      {"workload.model.seq=16384", "workload.batch.global=16", "workload.parallel.cp_comm=allgather"});
  const auto plans = cs::enumerate_plans(base, 8, {"delayed"}, false);
  ASSERT_FALSE(plans.empty());
  for (const auto& p : plans)
    EXPECT_EQ(p.parallel.cp_comm, cs::CpComm::ALLGATHER);
  cs::PlanOptions o;
  o.gpus = 8;
  const cs::PlanSearch search = cs::search_plans(base, o);
  const cs::OwnPlan own = cs::own_plan(base, o, search.budget_bytes);
  EXPECT_TRUE(own.searched) << own.outside;
}

TEST(Planner, LongMoeSequencesSearchContextParallelismWithCpRanksAsEpRanks)
{
  // Mixtral cut to 4 layers at 16K tokens on 8 GPUs, balanced routing: the search tries cp beside ep, each CP rank an
  // EP rank of its own (ep 1 or a multiple of cp x tp / etp), every such plan a valid scenario, and every bound below
  // its run.
  const cs::Scenario base =
      cs::load_scenario(std::string(CS_SOURCE_DIR) + "/scenarios/moe-mixtral.yaml",
                        {"workload.model.layers=4", "workload.model.seq=16384", "workload.batch.global=16",
                         "policies.moe_routing=balanced", "cluster.nodes=1"});
  const cs::PlanSearch search = every_plan(base);
  int with_cp = 0;
  for (const auto& p : search.best) {
    EXPECT_LE(p.bound_s, p.iteration_s * (1 + 1e-9)) << p.parallel.cp << " " << p.parallel.ep << " " << p.schedule;
    if (p.parallel.cp > 1 && p.parallel.ep > 1) {
      ++with_cp;
      EXPECT_EQ(p.parallel.ep % p.parallel.ep_ranks_per_replica(), 0);
      EXPECT_NO_THROW(cs::check_scenario(cs::plan_scenario(base, 8, p)));
    }
  }
  EXPECT_GT(with_cp, 0);
}

TEST(Planner, BalancedMoeBoundsCountEveryExpertAndStayBelowTheRuns)
{
  // Mixtral cut to 4 layers on 8 GPUs under balanced routing: every expert gets the mean, so the bound prices the
  // rank's experts as the run does (MoE parallel folding included) and adds the all-to-alls 1F1B leaves exposed.
  const cs::Scenario base = cs::load_scenario(
      std::string(CS_SOURCE_DIR) + "/scenarios/moe-mixtral.yaml",
      {"workload.model.layers=4", "workload.batch.global=32", "policies.moe_routing=balanced", "cluster.nodes=1"});
  cs::PlanOptions o;
  o.gpus = 8;
  o.top = 1000;
  o.exhaustive = true;
  const cs::PlanSearch search = cs::search_plans(base, o);
  ASSERT_GT(search.simulated, 20);
  int folded = 0, tight = 0, paired = 0;
  for (const auto& p : search.best) {
    EXPECT_LE(p.bound_s, p.iteration_s * (1 + 1e-9)) << p.parallel.tp << " " << p.parallel.ep << " " << p.schedule;
    folded += p.parallel.etp > 0 && p.parallel.etp < p.parallel.tp ? 1 : 0;
    paired += p.schedule == "dualpipev" && p.parallel.ep > 1 ? 1 : 0; // experts slowed beside the paired all-to-all
    tight += p.bound_s > 0.8 * p.iteration_s ? 1 : 0;
  }
  EXPECT_GT(folded, 0);
  EXPECT_GT(paired, 0);
  EXPECT_GT(tight, search.simulated / 4);
}

TEST(Planner, SkewedMoeBoundsCountTheMeanLoadFoldedOrNotAndStayBelowTheRuns)
{
  // Mixtral cut to 4 layers on 8 GPUs under the example's drifting Zipf routing and under uniform routing: the bound
  // prices the rank's mean load, under MoE parallel folding too where two or more EP ranks are simulated (it had left
  // the experts out there, and Mixtral 8x7B planned on 16 GPUs simulated 995 plans), and stays below every simulated
  // plan.
  for (const char* routing : {"policies.moe_routing=uniform", "policies.moe_routing.name=zipf"}) {
    const cs::Scenario base =
        cs::load_scenario(std::string(CS_SOURCE_DIR) + "/scenarios/moe-mixtral.yaml",
                          {"workload.model.layers=4", "workload.batch.global=16", routing, "cluster.nodes=1"});
    cs::PlanOptions o;
    o.gpus = 8;
    o.top = 1000;
    o.exhaustive = true;
    const cs::PlanSearch search = cs::search_plans(base, o);
    ASSERT_GT(search.simulated, 20) << routing;
    int folded = 0, folded_tight = 0;
    for (const auto& p : search.best) {
      EXPECT_LE(p.bound_s, p.iteration_s * (1 + 1e-9))
          << routing << " " << p.parallel.tp << " " << p.parallel.ep << " " << p.parallel.etp << " " << p.schedule;
      if (p.parallel.etp > 0 && p.parallel.etp < p.parallel.tp) {
        ++folded;
        folded_tight += p.bound_s > 0.6 * p.iteration_s ? 1 : 0;
      }
    }
    EXPECT_GT(folded, 0) << routing;
    EXPECT_GT(folded_tight, 0) << routing;
    // Pruned by those bounds, the search returns the exhaustive search's best plans.
    o.exhaustive = false;
    o.top = 3;
    const cs::PlanSearch pruned = cs::search_plans(base, o);
    EXPECT_LT(pruned.simulated, search.simulated / 2) << routing;
    ASSERT_EQ(pruned.best.size(), 3u) << routing;
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_DOUBLE_EQ(pruned.best[i].iteration_s, search.best[i].iteration_s) << routing << " " << i;
  }
}

TEST(Planner, UnevenLayersStillGetInterleavedSchedules)
{
  // 7 layers on pp 2: two chunks a device cannot split them evenly, but the balanced partition runs them (as
  // DeepSeek-V3's 61 layers run on 32 chunks).
  const cs::Scenario base = small_gpt(7);
  cs::PlanOptions o;
  o.gpus = 8;
  o.top = 100000;
  o.exhaustive = true;
  const cs::PlanSearch search = cs::search_plans(base, o);
  int interleaved = 0;
  for (const auto& p : search.best)
    if (p.parallel.vpp > 1) {
      ++interleaved;
      // A layer at least a stage of each copy of the model (DualPipe's two copies hold pp stages each).
      const auto map =
          cs::Registry<cs::PipelineSchedule>::instance().create(p.schedule)->stage_map(p.parallel.pp, p.parallel.vpp);
      EXPECT_GE(7, map.chain_length()) << p.schedule;
      EXPECT_NO_THROW(cs::check_scenario(cs::plan_scenario(base, o.gpus, p)));
    }
  EXPECT_GT(interleaved, 0);
}

TEST(Planner, PlansSimulatedSideBySideGiveTheSameBestPlans)
{
  // --jobs runs plans in worker processes, a batch at a time: the best plans and their times are the serial search's.
  const cs::Scenario base = small_gpt();
  cs::PlanOptions serial;
  serial.gpus = 8;
  serial.top = 4;
  cs::PlanOptions side_by_side = serial;
  side_by_side.jobs = 3;
  const auto one = cs::search_plans(base, serial);
  const auto three = cs::search_plans(base, side_by_side);
  ASSERT_EQ(one.best.size(), 4u);
  ASSERT_EQ(three.best.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(three.best[i].iteration_s, one.best[i].iteration_s) << i; // exact: the timings come back in hex
    EXPECT_EQ(three.best[i].parallel.dp, one.best[i].parallel.dp) << i;
    EXPECT_EQ(three.best[i].parallel.pp, one.best[i].parallel.pp) << i;
  }
  EXPECT_EQ(three.enumerated, one.enumerated);
  EXPECT_GE(three.simulated + three.timed_as_twin, one.simulated + one.timed_as_twin);
}

TEST(SimulationPool, AWorkersFailureComesBackAsAnError)
{
  const cs::Scenario base = small_gpt();
  cs::SimulationPool pool(base, 8, 2);
  EXPECT_EQ(pool.workers(), 2);
  cs::Plan good;
  good.parallel.dp = 8;
  cs::Plan bad = good;
  bad.parallel.dp = 3; // 3 replicas of one GPU on 8 GPUs: the run refuses it
  const auto timed = pool.time({good});
  ASSERT_EQ(timed.size(), 1u);
  EXPECT_GT(std::get<0>(timed[0]), 0.0);
  EXPECT_THROW(pool.time({good, bad}), std::runtime_error);
  // The pool keeps serving after a failed plan.
  EXPECT_EQ(std::get<0>(pool.time({good}).at(0)), std::get<0>(timed[0]));
}

TEST(OwnPlan, TheScenariosOwnPlanIsTimedAndPlacedInTheSearch)
{
  // small_gpt runs dp 8 with micro-batch 2 on 8 GPUs: a plan of the tree, timed as the planner times its candidates.
  const cs::Scenario base = small_gpt();
  cs::PlanOptions options;
  options.gpus = 8;
  const auto search = cs::search_plans(base, options);
  const cs::OwnPlan own = cs::own_plan(base, options, search.budget_bytes);
  EXPECT_TRUE(own.searched);
  EXPECT_TRUE(own.outside.empty()) << own.outside;
  EXPECT_EQ(own.plan.parallel.dp, 8);
  EXPECT_EQ(own.plan.micro, 2);
  ASSERT_FALSE(search.best.empty());
  EXPECT_GE(own.iteration_s, search.best.front().iteration_s * (1 - 1e-9)); // the search holds it: never faster
  EXPECT_NE(cs::own_plan_line(own, search.best.front()).find("slower than the best"), std::string::npos);
  // Stages of its own: the layout is in the tree, but the planner partitions the layers itself.
  const cs::Scenario staged =
      cs::load_scenario(::testing::TempDir() + "/cs_plan_" + std::to_string(::getpid()) + ".yaml",
                        {"workload.parallel.pp=2", "workload.parallel.dp=4", "workload.parallel.stage_layers=[3, 5]",
                         "policies.pipeline=1f1b"});
  const cs::OwnPlan own_staged = cs::own_plan(staged, options, search.budget_bytes);
  EXPECT_TRUE(own_staged.searched);
  EXPECT_NE(own_staged.outside.find("stage_layers"), std::string::npos) << own_staged.outside;
  // Faster than the best found: the line says why.
  cs::Plan best = search.best.front();
  cs::OwnPlan faster = own_staged;
  faster.iteration_s = best.iteration_s / 2;
  const std::string line = cs::own_plan_line(faster, best);
  EXPECT_NE(line.find("faster than the best plan found"), std::string::npos) << line;
  EXPECT_NE(line.find("stage_layers"), std::string::npos) << line;
  faster.searched = false;
  faster.outside = "its plan (x) is not in the planner's tree";
  EXPECT_NE(cs::own_plan_line(faster, best).find("not in the planner's tree"), std::string::npos);
  // Over the search's memory budget (the reserve kept back), though the run itself may fit: the planner passed it by.
  const cs::OwnPlan tight = cs::own_plan(base, options, own.memory_bytes / 2);
  EXPECT_TRUE(tight.searched);
  EXPECT_NE(tight.outside.find("over the planner's budget"), std::string::npos) << tight.outside;
  // In the tree, within the budget, with the planner's own stages: only the bound can have passed it by.
  cs::OwnPlan in_tree = own;
  in_tree.iteration_s = best.iteration_s / 2;
  EXPECT_NE(cs::own_plan_line(in_tree, best).find("the bound, which is not strict"), std::string::npos);
  // Timed in a child process beside the search, the same figures to the bit; one never asked for is ended.
  cs::OwnPlanTiming beside(base);
  const cs::OwnPlan timed = cs::own_plan(base, options, search.budget_bytes, &beside);
  EXPECT_EQ(timed.iteration_s, own.iteration_s);
  EXPECT_EQ(timed.memory_bytes, own.memory_bytes);
  {
    cs::OwnPlanTiming unused(base);
  }
}

TEST(OwnPlan, PlansKeepTheScenariosRankOrderAndAPlanOutsideTheTreeNamesWhereItDiffers)
{
  // Megatron-Core's default order puts the pipeline outermost (tp-dp-pp). The planner searched every plan in the
  // simulator's default order instead, so a scenario written in Megatron's order was never in its tree.
  const cs::Scenario megatron = small_gpt(8, {"workload.parallel.placement=tp-dp-pp", "workload.parallel.pp=2",
                                              "workload.parallel.dp=4", "policies.pipeline=1f1b"});
  cs::PlanOptions options;
  options.gpus = 8;
  const auto plans = cs::enumerate_plans(megatron, 8, {"none"}, false);
  ASSERT_FALSE(plans.empty());
  for (const auto& p : plans)
    EXPECT_EQ(p.parallel.placement, cs::Placement::TP_DP_PP);
  const auto search = cs::search_plans(megatron, options);
  const cs::OwnPlan own = cs::own_plan(megatron, options, search.budget_bytes);
  EXPECT_TRUE(own.searched) << own.outside;
  // A micro-batch the tree does not try (it doubles from 1): the report names the choice and the tree's nearest value.
  const cs::Scenario odd = small_gpt(8, {"workload.batch.global=24", "workload.batch.micro=3"});
  const cs::OwnPlan outside = cs::own_plan(odd, options, search.budget_bytes);
  EXPECT_FALSE(outside.searched);
  EXPECT_NE(outside.outside.find("not in the planner's tree (its nearest plan there: micro-batch 3 where the tree has"),
            std::string::npos)
      << outside.outside;
}

TEST(Planner, BothRankOrdersAreSearchedOnRequestAndTheBestPlanKeepsItsOwn)
{
  // --placements: a pipelined plan comes in both orders, one without a pipeline once (the orders are then the same).
  const cs::Scenario base =
      small_gpt(8, {"workload.parallel.pp=2", "workload.parallel.dp=4", "policies.pipeline=1f1b"});
  const auto own = cs::enumerate_plans(base, 8, {"none"}, false);
  const auto both = cs::enumerate_plans(base, 8, {"none"}, false, true);
  std::size_t pipelined = 0, flat = 0, other = 0;
  for (const auto& p : own)
    (p.parallel.pp > 1 ? pipelined : flat) += 1;
  for (const auto& p : both)
    other += p.parallel.placement == cs::Placement::TP_DP_PP ? 1 : 0;
  ASSERT_GT(pipelined, 0u);
  EXPECT_EQ(both.size(), own.size() + pipelined);
  EXPECT_EQ(other, pipelined);
  // The best plan written as a scenario runs in its own order: best.yaml gives back its time.
  cs::PlanOptions options;
  options.gpus = 8;
  options.search_placement = true;
  const auto search = cs::search_plans(base, options);
  ASSERT_FALSE(search.best.empty());
  for (const auto& best : search.best) {
    const std::string path = ::testing::TempDir() + "/cs_plan_order_" + std::to_string(::getpid()) + ".yaml";
    std::ofstream(path) << cs::plan_scenario_yaml(base, 8, best);
    const cs::Scenario s = cs::load_scenario(path, {});
    EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.parallel.placement, best.parallel.placement);
  }
}

TEST(Planner, DispatchersAreSearchedOnRequestAndTheBestPlanWritesItsOwn)
{
  // Mixtral cut to 2 layers over two nodes of 4 GPUs: each MoE plan comes once per dispatcher asked for, a dense one
  // with none; DeepEP fuses the permutation and sends a token once per node, so with both on the table the best plans
  // dispatch with it, and the best one's scenario says so.
  const cs::Scenario base = cs::load_scenario(std::string(CS_SOURCE_DIR) + "/scenarios/moe-mixtral.yaml",
                                              {"workload.model.layers=2", "workload.batch.global=16",
                                               "cluster.gpus_per_node=4", "cluster.network.nics_per_node=4"});
  const auto own = cs::enumerate_plans(base, 8, {"none"}, false);
  const auto both = cs::enumerate_plans(base, 8, {"none"}, false, false, {"alltoall", "deepep"});
  ASSERT_FALSE(own.empty());
  EXPECT_EQ(both.size(), 2 * own.size());
  for (const auto& p : own)
    EXPECT_EQ(p.dispatcher, "alltoall"); // the scenario's own
  EXPECT_EQ(cs::plan_key(both[0], 0) == cs::plan_key(both[1], 0), false);
  for (const auto& p : cs::enumerate_plans(small_gpt(), 8, {"none"}, false, false, {"deepep"}))
    EXPECT_EQ(p.dispatcher, ""); // a dense model has nothing to dispatch
  cs::PlanOptions options;
  options.gpus = 8;
  options.top = 50;
  options.dispatchers = {"alltoall", "deepep"};
  const auto search = cs::search_plans(base, options);
  ASSERT_FALSE(search.best.empty());
  std::set<std::string> seen;
  for (const auto& p : search.best)
    seen.insert(p.dispatcher);
  EXPECT_TRUE(seen.count("deepep")) << search.best.front().dispatcher;
  const cs::Plan& best = search.best.front();
  const std::string path = ::testing::TempDir() + "/cs_plan_dispatch_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << cs::plan_scenario_yaml(base, 8, best);
  const cs::Scenario s = cs::load_scenario(path, {});
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.moe.dispatcher, best.dispatcher);
  // The same plan with the all-to-all is slower: its permutation kernels of its own, and its copies of a token.
  const auto crossing = std::find_if(search.best.begin(), search.best.end(),
                                     [](const cs::Plan& p) { return p.dispatcher == "deepep" && p.parallel.ep > 1; });
  ASSERT_NE(crossing, search.best.end());
  cs::Plan a2a = *crossing;
  a2a.dispatcher = "alltoall";
  const double t =
      cs::run_scenario(cs::plan_scenario(base, 8, a2a), cs::RunOptions{}).metrics.at(cs::metric::iteration_time_s);
  EXPECT_GT(t, crossing->iteration_s) << crossing->parallel.ep;
}

TEST(SimulationPool, AWorkerThatDiedIsAnErrorNotASignal)
{
  // Writing to a dead worker's socket raises SIGPIPE unless the pool sends without it: this test would end there.
  const cs::Scenario base = small_gpt();
  cs::SimulationPool pool(base, 8, 2);
  const auto pids = pool.worker_pids();
  ASSERT_EQ(pids.size(), 2u);
  ::kill(pids[0], SIGKILL);
  ::waitpid(pids[0], nullptr, 0); // let it go before the pool writes to it
  cs::Plan good;
  good.parallel.dp = 8;
  EXPECT_THROW(pool.time({good, good}), std::runtime_error);
}

TEST(Planner, PairedOpsLastAtLeastTheAllToAllsBesideThem)
{
  // Mixtral cut to 8 layers on 16 GPUs over PCIe and a slow network, where each all-to-all outlasts the compute a
  // paired op runs beside it: under DualPipe and DualPipeV the middle stages' pairs alternate their blocks with the
  // partner's all-to-alls, and the bound that counts them (static placement sends each whole) stays below the run,
  // under balanced and under drifting Zipf routing.
  for (const char* routing : {"policies.moe_routing=balanced", "policies.moe_routing.name=zipf"})
    for (const char* schedule : {"dualpipe", "dualpipev"}) {
      const cs::Scenario base = cs::load_scenario(
          std::string(CS_SOURCE_DIR) + "/scenarios/moe-mixtral.yaml",
          {"workload.model.layers=8", "workload.batch.global=32", routing, "cluster.nodes=4", "cluster.gpus_per_node=4",
           "cluster.network.nics_per_node=4", "cluster.intra_node.kind=pcie", "cluster.network.nic_bandwidth=25Gb/s"});
      cs::Plan plan;
      plan.parallel = cs::workload_as<cs::TrainingWorkload>(base).params.parallel.layout(16);
      plan.parallel.tp = 1;
      plan.parallel.pp = std::string(schedule) == "dualpipe" ? 4 : 2;
      plan.parallel.vpp = 2;
      plan.parallel.dp = 16 / plan.parallel.pp;
      plan.parallel.ep = 4;
      plan.parallel.etp = 1;
      plan.schedule = schedule;
      plan.micro = 1;
      const cs::Scenario s = cs::timing_scenario(base, 16, plan);
      const auto& params = cs::workload_as<cs::TrainingWorkload>(s).params;
      const cs::DeviceSpec& device = *cs::DeviceCatalog::builtin().find(s.cluster.device);
      auto cost = cs::make_cost_model(device, *cs::builtin_profile(s.cluster.device));
      const cs::PlatformSpec platform = cs::build_platform_spec(s.cluster, device);
      const int m = params.batch.global / (plan.parallel.dp * plan.micro);
      const double phased = cs::pipeline_compute_bound(params, plan, {}, *cost, platform, m, true);
      const double plain = cs::pipeline_compute_bound(params, plan, {}, *cost, platform, m, false);
      const double run = std::get<0>(cs::time_plan(base, 16, plan));
      EXPECT_GT(phased, 1.1 * plain) << routing << " " << schedule;
      EXPECT_LE(phased, run * (1 + 1e-9)) << routing << " " << schedule;
      // The search's work bound, which orders it, counts the pairs' idle too and stays below the timeline.
      cs::SearchBounds paired(*cost, platform, true), unpaired(*cost, platform, false);
      const double work = paired.work(params, plan, {}, m);
      EXPECT_GT(work, unpaired.work(params, plan, {}, m)) << routing << " " << schedule;
      EXPECT_LE(work, paired.timeline(params, plan, {}, m) * (1 + 1e-12)) << routing << " " << schedule;
    }
}

TEST(Planner, ABaseWhoseEmbeddingAndLossTakeSlotsStillPipelines)
{
  // Megatron's --account-for-embedding/loss-in-pipeline-split in the scenario (6 layers and 2 slots: 8): the plans
  // whose stages the planner partitions weigh the embedding and the loss themselves and drop the slots; those split
  // evenly keep them. Before, every pipelined plan was refused (the slots go with the even split only) and the best
  // plan was pure data parallelism.
  const cs::Scenario base = small_gpt(6, {"workload.parallel.pp=2", "workload.parallel.account_for_embedding=true",
                                          "workload.parallel.account_for_loss=true"});
  const cs::PlanSearch every = every_plan(base);
  int pipelined = 0, with_slots = 0;
  for (const cs::Plan& p : every.best) {
    if (p.parallel.pp < 2)
      continue;
    ++pipelined;
    const cs::Scenario s = cs::plan_scenario(base, 8, p);
    EXPECT_NO_THROW(cs::check_scenario(s)) << p.parallel.pp << " " << p.schedule;
    const auto& parallel = cs::workload_as<cs::TrainingWorkload>(s).params.parallel;
    EXPECT_EQ(parallel.account_for_embedding, p.stage_layers.empty());
    with_slots += parallel.account_for_embedding ? 1 : 0;
    const std::string yaml = cs::plan_scenario_yaml(base, 8, p);
    EXPECT_EQ(yaml.find("account_for_embedding") != std::string::npos, p.stage_layers.empty()) << yaml;
  }
  EXPECT_GT(pipelined, 10);
  EXPECT_GT(with_slots, 0);
  EXPECT_LT(every.invalid, every.enumerated / 2);
}

TEST(Planner, NodeLimitedRoutingLimitsNothingWhereTheExpertGroupSpansFewerNodes)
{
  // DeepSeek-V3's routing sends a token to experts on at most 4 nodes. A plan whose EP group spans fewer nodes reaches
  // all of them anyway: the plan runs with the limit at its group's span (it was refused before, a third of the tree).
  const cs::Scenario base = cs::load_scenario(cs::testing::src("bench/scenarios/deepseek-v3-2048-h800.yaml"), {});
  cs::Plan p;
  p.parallel.tp = 2;
  p.parallel.pp = 16;
  p.parallel.vpp = 2;
  p.parallel.dp = 64;
  p.parallel.ep = 8;
  p.parallel.zero = 1;
  p.parallel.sequence_parallel = true;
  p.parallel.placement = cs::Placement::TP_DP_PP; // a stage's replicas side by side, as the scenario places them
  p.schedule = "dualpipe";
  p.recompute = cs::Recompute::SELECTIVE;
  const cs::Scenario s = cs::plan_scenario(base, 2048, p);
  EXPECT_NO_THROW(cs::check_scenario(s));
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.moe.max_nodes_per_token, 2); // EP 8 x TP 2: 2 nodes
  EXPECT_NE(cs::plan_scenario_yaml(base, 2048, p).find("max_nodes_per_token: 2"), std::string::npos);
  cs::Plan wide = p; // EP 64 x TP 2 spans 16 nodes: the scenario's 4 stay
  wide.parallel.ep = 64;
  EXPECT_EQ(
      cs::workload_as<cs::TrainingWorkload>(cs::plan_scenario(base, 2048, wide)).params.model.moe.max_nodes_per_token,
      4);
}
