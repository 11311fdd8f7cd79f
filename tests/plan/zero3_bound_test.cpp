#include "sim/plan/zero3_bound.hpp"

#include "base/registry.hpp"
#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "sim/plan/search_bounds.hpp"
#include "sim/run/scenario_checks.hpp"
#include "tests/plan/every_plan.hpp"
#include "workloads/training/training_workload.hpp"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <unistd.h>

namespace {

// A GPT on 2 nodes of 8 H100 behind 25 Gb/s NICs: ZeRO-3's gathers of a stage's parameters, once per op, take
// longer than its compute. `framework`: the training stack (empty: the default); `fp8`: an FP8 recipe (empty: none).
cs::Scenario slow_network_gpt(const std::string& framework = "", const std::string& fp8 = "")
{
  const std::string path = ::testing::TempDir() + "/cs_zero3_" + std::to_string(::getpid()) + framework + fp8 + ".yaml";
  std::ofstream(path) << R"(name: zero3-bound-test
backend: analytical
cluster:
  device: h100-sxm5
  nodes: 2
  gpus_per_node: 8
  intra_node: {kind: nvswitch}
  network: {kind: fat-tree, nic_bandwidth: 25Gb/s, nics_per_node: 8}
workload:
  kind: transformer-training
  model: {layers: 8, hidden: 2048, heads: 16, seq: 1024, vocab: 32000, dtype: bf16)"
                      << (fp8.empty() ? "" : ", fp8: " + fp8) << R"(}
  batch: {global: 32, micro: 1}
  iterations: 1
)" << (framework.empty() ? "" : "  framework: " + framework + "\n")
                      << "policies: {sync: ring-allreduce}\n";
  cs::Scenario s = cs::load_scenario(path, {});
  cs::check_scenario(s);
  return s;
}

// ZeRO-1/2 on the same slow network: the all-gathers of the updated shards after the optimizer step hold back the next
// iteration, so the timeline counts them in each device's tail: above the same plan's bound without sharding (whose
// optimizer step is the slower one), each positive and below the step.
void expect_zero12_gathers_in_the_tail(const cs::Scenario& base, const cs::Plan& p, const cs::DeviceSpec& device,
                                       const cs::KernelCostModel& cost)
{
  const cs::Scenario s = cs::plan_scenario(base, 16, p);
  const cs::TrainingParams& params = cs::workload_as<cs::TrainingWorkload>(s).params;
  const cs::PlatformSpec platform = cs::build_platform_spec(s.cluster, device);
  const auto gathers = cs::zero12_gather_seconds(params, p, cs::bound_stages(params, p, cost, platform), platform);
  ASSERT_EQ(gathers.size(), static_cast<std::size_t>(p.parallel.pp));
  for (double g : gathers) {
    EXPECT_GT(g, 0.0);
    EXPECT_LE(g, p.iteration_s);
  }
  const int m = params.batch.global / (p.parallel.dp * p.micro);
  cs::Plan unsharded = p;
  unsharded.parallel.zero = 0;
  EXPECT_GT(cs::pipeline_compute_bound(params, p, {}, cost, platform, m),
            cs::pipeline_compute_bound(params, unsharded, {}, cost, platform, m));
  EXPECT_TRUE(
      cs::zero12_gather_seconds(params, unsharded, cs::bound_stages(params, unsharded, cost, platform), platform)
          .empty());
}

// How often each device runs each pass of each of its stages under plan `p`'s schedule: what the gather bounds count.
cs::PassCounts counts_of(const cs::TrainingParams& params, const cs::Plan& p, const cs::StageSet& set)
{
  const auto order = cs::Registry<cs::PipelineSchedule>::instance()
                         .create(p.schedule.empty() ? "1f1b" : p.schedule)
                         ->order(p.parallel.pp, p.parallel.vpp, params.batch.global / (p.parallel.dp * p.micro));
  return cs::pass_counts(order, set.map);
}

// Every plan of `base` on its 16 GPUs, each simulated.
cs::PlanSearch every_plan(const cs::Scenario& base) { return cs::testing::every_plan(base, 16); }

} // namespace

TEST(ZeroThreeBound, GathersStayBelowEverySimulatedStepAndBindWhereTheNetworkIsSlow)
{
  // ZeRO-3's gathers bound the step where they outlast the compute; ZeRO-1/2's join the optimizer step's tail.
  const cs::Scenario base = slow_network_gpt();
  const cs::PlanSearch every = every_plan(base);
  const cs::DeviceSpec& device = *cs::DeviceCatalog::builtin().find("h100-sxm5");
  const auto cost = cs::make_cost_model(device, *cs::builtin_profile("h100-sxm5"));
  int zero3 = 0, binding = 0, sharded = 0;
  for (const cs::Plan& p : every.best) {
    EXPECT_LE(p.bound_s, p.iteration_s * (1 + 1e-9)) << p.parallel.dp << " " << p.parallel.pp << " " << p.schedule;
    if (p.parallel.zero >= 1 && p.parallel.zero <= 2 && p.parallel.dp >= 2) {
      ++sharded;
      expect_zero12_gathers_in_the_tail(base, p, device, *cost);
    }
    if (p.parallel.zero < 3 || p.parallel.dp * p.parallel.cp < 2)
      continue;
    ++zero3;
    const cs::Scenario s = cs::plan_scenario(base, 16, p);
    const cs::TrainingParams& params = cs::workload_as<cs::TrainingWorkload>(s).params;
    const cs::PlatformSpec platform = cs::build_platform_spec(s.cluster, device);
    const cs::StageSet set = cs::bound_stages(params, p, *cost, platform);
    const int microbatches = params.batch.global / (p.parallel.dp * p.micro);
    const auto gathers = cs::zero3_gather_seconds(params, p, set, platform, counts_of(params, p, set));
    ASSERT_EQ(gathers.size(), static_cast<std::size_t>(p.parallel.pp));
    const double least = *std::min_element(gathers.begin(), gathers.end());
    EXPECT_GT(least, 0.0);
    EXPECT_LE(least, p.iteration_s) << p.parallel.dp << " " << p.parallel.pp << " " << p.schedule;
    const double compute = cs::pipeline_compute_bound(params, p, {}, *cost, platform, microbatches);
    if (least > compute && least > 0.5 * p.iteration_s)
      ++binding;
  }
  EXPECT_GT(zero3, 10);
  EXPECT_GT(binding, 0); // where the gathers take longer than the compute, they are the bound, and a close one
  EXPECT_GT(sharded, 5);
}

TEST(ZeroThreeBound, APipelineThatKeepsItsStagesGatheredIsBoundByOneGatherAChunk)
{
  // Under torchtitan's FSDP a pipelined ZeRO-3 stage is gathered once a step (framework.pipeline_keeps_unsharded), so
  // its gathers bound the step once a chunk, not once an op: every plan's bound stays below its simulated step.
  const cs::Scenario base = slow_network_gpt("fsdp");
  const cs::PlanSearch every = every_plan(base);
  const cs::DeviceSpec& device = *cs::DeviceCatalog::builtin().find("h100-sxm5");
  const auto cost = cs::make_cost_model(device, *cs::builtin_profile("h100-sxm5"));
  int kept = 0;
  for (const cs::Plan& p : every.best) {
    EXPECT_LE(p.bound_s, p.iteration_s * (1 + 1e-9)) << p.parallel.dp << " " << p.parallel.pp << " " << p.schedule;
    const cs::Scenario s = cs::plan_scenario(base, 16, p);
    cs::TrainingParams params = cs::workload_as<cs::TrainingWorkload>(s).params;
    if (!params.framework.keeps_stages_gathered(p.parallel))
      continue;
    ++kept;
    const cs::PlatformSpec platform = cs::build_platform_spec(s.cluster, device);
    const cs::StageSet set = cs::bound_stages(params, p, *cost, platform);
    const auto counts = counts_of(params, p, set);
    const auto once = cs::zero3_gather_seconds(params, p, set, platform, counts);
    params.framework.pipeline_keeps_unsharded = false;
    const auto every_op = cs::zero3_gather_seconds(params, p, set, platform, counts);
    ASSERT_EQ(once.size(), every_op.size());
    for (std::size_t d = 0; d < once.size(); ++d) {
      EXPECT_GT(once[d], 0.0);
      EXPECT_LT(once[d], every_op[d]); // each microbatch's forward and backward gathered again, without it
    }
  }
  EXPECT_GT(kept, 0);
}

TEST(ZeroThreeBound, FpEightParameterGathersBoundTheStepAtTheirOwnBytes)
{
  // With the GEMM weights gathered in FP8 (framework.fp8_param_gather) ZeRO's gathers move one byte a GEMM weight, and
  // the bounds count the same bytes the run moves: every plan's bound stays below its simulated step, and a ZeRO-3 or
  // ZeRO-1/2 plan's gathers bound less than with the weights gathered in bf16.
  const cs::Scenario base = slow_network_gpt("{name: megatron-core, fp8_param_gather: true}", "tensorwise");
  const cs::PlanSearch every = every_plan(base);
  const cs::DeviceSpec& device = *cs::DeviceCatalog::builtin().find("h100-sxm5");
  const auto cost = cs::make_cost_model(device, *cs::builtin_profile("h100-sxm5"));
  int zero3 = 0, sharded = 0;
  for (const cs::Plan& p : every.best) {
    EXPECT_LE(p.bound_s, p.iteration_s * (1 + 1e-9)) << p.parallel.dp << " " << p.parallel.pp << " " << p.schedule;
    if (p.parallel.zero < 1 || p.parallel.dp * p.parallel.cp < 2)
      continue;
    const cs::Scenario s = cs::plan_scenario(base, 16, p);
    cs::TrainingParams params = cs::workload_as<cs::TrainingWorkload>(s).params;
    const cs::PlatformSpec platform = cs::build_platform_spec(s.cluster, device);
    const cs::StageSet set = cs::bound_stages(params, p, *cost, platform);
    const auto counts = counts_of(params, p, set);
    auto gathers = [&] {
      return p.parallel.zero >= 3 ? cs::zero3_gather_seconds(params, p, set, platform, counts)
                                  : cs::zero12_gather_seconds(params, p, set, platform);
    };
    const auto fp8 = gathers();
    params.framework.fp8_param_gather = false;
    const auto bf16 = gathers();
    ASSERT_EQ(fp8.size(), bf16.size());
    for (std::size_t d = 0; d < fp8.size(); ++d) {
      EXPECT_GT(fp8[d], 0.0);
      EXPECT_LT(fp8[d], bf16[d]); // the layers' GEMM weights at one byte, the embedding and the norms at two
    }
    ++(p.parallel.zero >= 3 ? zero3 : sharded);
  }
  EXPECT_GT(zero3, 5);
  EXPECT_GT(sharded, 5);
}

TEST(ZeroThreeBound, HsdpPlansAreBoundByTheirShardGroupsGathers)
{
  // `plan --hsdp` on 2 nodes behind 25 Gb/s NICs: a ZeRO plan also comes with shard groups of one node (the shards
  // all-reduced between the nodes). Every plan's bound stays below its simulated step; an HSDP plan's gathers run on
  // NVLink, so their bound is below the same plan's over both nodes, and its ZeRO-3 step is faster.
  const cs::Scenario base = slow_network_gpt();
  cs::PlanOptions options;
  options.gpus = 16;
  options.top = 100000;
  options.exhaustive = true;
  options.search_hsdp = true;
  const cs::PlanSearch every = cs::search_plans(base, options);
  const cs::DeviceSpec& device = *cs::DeviceCatalog::builtin().find("h100-sxm5");
  const auto cost = cs::make_cost_model(device, *cs::builtin_profile("h100-sxm5"));
  auto key = [](cs::Plan p) {
    p.parallel.dp_replicate = 1;
    p.stage_layers.clear();
    return cs::plan_key(p, p.parallel.zero);
  };
  std::map<std::string, const cs::Plan*> whole;
  for (const cs::Plan& p : every.best)
    if (p.parallel.dp_replicate == 1)
      whole[key(p)] = &p;
  int hsdp = 0, faster = 0;
  for (const cs::Plan& p : every.best) {
    EXPECT_LE(p.bound_s, p.iteration_s * (1 + 1e-9)) << p.parallel.dp << " " << p.parallel.dp_replicate;
    if (p.parallel.dp_replicate == 1)
      continue;
    ++hsdp;
    if (p.parallel.zero >= 3) {
      const cs::Plan& w = *whole.at(key(p));
      const cs::Scenario s = cs::plan_scenario(base, 16, p);
      const cs::TrainingParams& params = cs::workload_as<cs::TrainingWorkload>(s).params;
      const cs::PlatformSpec platform = cs::build_platform_spec(s.cluster, device);
      const cs::StageSet set = cs::bound_stages(params, p, *cost, platform);
      const auto counts = counts_of(params, p, set);
      const auto in_node = cs::zero3_gather_seconds(params, p, set, platform, counts);
      const auto across = cs::zero3_gather_seconds(params, w, set, platform, counts);
      for (std::size_t d = 0; d < in_node.size(); ++d)
        EXPECT_LT(in_node[d], across[d]);
      faster += p.iteration_s < w.iteration_s ? 1 : 0;
    }
  }
  EXPECT_GT(hsdp, 10);
  EXPECT_GT(faster, 5);
  // The best plan as a scenario (plan --out's best.yaml) keeps its replicas of the shards.
  const auto first =
      std::find_if(every.best.begin(), every.best.end(), [](const cs::Plan& p) { return p.parallel.dp_replicate > 1; });
  ASSERT_NE(first, every.best.end());
  EXPECT_NE(
      cs::plan_scenario_yaml(base, 16, *first).find("dp_replicate: " + std::to_string(first->parallel.dp_replicate)),
      std::string::npos);
}
