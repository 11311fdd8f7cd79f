// cluster.stragglers seen by every workload kind: training (slow GPUs and slowdowns per iteration), MapReduce (slow
// hosts), collective benchmarks (late ranks); recorded step times refused where no worker steps.
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

using cs::testing::src;

double straggler_metric(const std::string& scenario, const std::string& sets, const char* key)
{
  static int count = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("cs_strag_" + std::to_string(::getpid()) + "_" + std::to_string(++count));
  auto r = cs::testing::run_clustersim("run " + src(scenario) + " --quiet --out " + dir.string() + " " + sets);
  EXPECT_EQ(r.code, 0) << sets << "\n" << r.err;
  std::ifstream in(dir / "report.json");
  const auto report = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(dir);
  return report.is_discarded() ? -1 : report["metrics"].value(key, -1.0);
}

} // namespace

TEST(StragglersEverywhere, TrainingWaitsForItsSlowestGpu)
{
  const std::string q = "scenarios/quickstart.yaml", a = "--backend analytical ";
  const double base = straggler_metric(q, a, "iteration_time_s");
  const double slow =
      straggler_metric(q, a + "--set 'cluster.stragglers.slow=[{devices: [5], factor: 0.5}]'", "iteration_time_s");
  EXPECT_GT(slow / base, 1.8); // data parallelism: every replica waits for the half-speed GPU's backward
  const double late =
      straggler_metric(q, a + "--set 'cluster.stragglers.random={probability: 1, duration: 50ms}'", "iteration_time_s");
  EXPECT_NEAR(late - base, 0.05, 0.005);
}

namespace {

// The quickstart's step with `parallel` as its layout: alone, with GPU `slow_device` at half speed, and with a spread
// of speeds.
struct GroupSteps {
  double base, slow, spread;
};

GroupSteps group_steps(const std::string& parallel, int slow_device)
{
  const std::string q = "scenarios/quickstart.yaml",
                    a = "--backend analytical --set 'workload.parallel=" + parallel + "' ";
  const std::string slow = "--set 'cluster.stragglers.slow=[{devices: [" + std::to_string(slow_device) +
                           "], factor: 0.5}]'";
  return {straggler_metric(q, a, "iteration_time_s"), straggler_metric(q, a + slow, "iteration_time_s"),
          straggler_metric(q, a + "--set cluster.stragglers.spread=0.02", "iteration_time_s")};
}

} // namespace

TEST(StragglersEverywhere, ATensorParallelGroupRunsAtItsSlowestRank)
{
  // tp 4: the group is simulated as its first rank, but a slow third rank holds back every layer's all-reduce.
  const GroupSteps t = group_steps("{dp: 4, tp: 4}", 6);
  EXPECT_GT(t.slow / t.base, 1.5) << t.base << " " << t.slow;
}

TEST(StragglersEverywhere, AContextParallelGroupRunsAtItsSlowestRank)
{
  // tp 2 x cp 2: the group is simulated as its first rank, but every step of the ring waits for its slowest member.
  // Before, only the TP ranks were folded, so a half-speed GPU on CP rank 1 (GPU 3) left the step unchanged and a
  // spread of speeds could even speed a run up (CP rank 0 drawn fast).
  const GroupSteps c = group_steps("{dp: 4, tp: 2, cp: 2}", 3);
  EXPECT_GT(c.slow / c.base, 1.5) << c.base << " " << c.slow;
  EXPECT_GT(c.spread, c.base);
}

TEST(StragglersEverywhere, ASpreadOfGpuSpeedsSlowsTheStepByTheSlowestGpu)
{
  // 16 GPUs: the slowest of 16 runs 1.77 standard deviations below the median, and every replica waits for its
  // backward. Communication does not slow, so the step slows by a little less than the compute does.
  const std::string q = "scenarios/quickstart.yaml", a = "--backend analytical ";
  const double base = straggler_metric(q, a, "iteration_time_s");
  const double spread = straggler_metric(q, a + "--set cluster.stragglers.spread=0.02", "iteration_time_s");
  const double other_seed =
      straggler_metric(q, a + "--set cluster.stragglers.spread=0.02 --seed 7", "iteration_time_s");
  // The report names the speed every step waited for: the slowest of 16 at 1.77 standard deviations.
  EXPECT_NEAR(straggler_metric(q, a + "--set cluster.stragglers.spread=0.02", "slowest_gpu_speed"), 1 - 0.02 * 1.7688,
              1e-6);
  EXPECT_EQ(straggler_metric(q, a, "slowest_gpu_speed"), -1); // absent without stragglers
  const double slowest = 1 / (1 - 0.02 * 1.769);
  EXPECT_GT(spread / base, 1 + 0.8 * (slowest - 1)) << base << " " << spread;
  EXPECT_LT(spread / base, slowest + 1e-9) << base << " " << spread;
  EXPECT_NEAR(other_seed / spread, 1.0, 0.005); // the seed moves the slowest GPU, not its speed
}

TEST(StragglersEverywhere, MapReduceJobsSlowOnSlowHosts)
{
  const std::string f = "scenarios/reference/mapreduce-hit-paper.yaml";
  const double base = straggler_metric(f, "", "mean_jct_s");
  const double slow =
      straggler_metric(f, "--set 'cluster.stragglers.slow=[{nodes: [0,1,2,3,4,5,6,7], factor: 0.25}]'", "mean_jct_s");
  EXPECT_GT(slow, 1.1 * base);
}

TEST(StragglersEverywhere, CollectivesWaitForLateRanks)
{
  const std::string f = "scenarios/reference/nccl-a100-2node-hdr.yaml";
  const double base = straggler_metric(f, "", "busbw_gbps");
  const double late =
      straggler_metric(f, "--set 'cluster.stragglers.random={probability: 1, duration: 10ms}'", "busbw_gbps");
  EXPECT_LT(late, 0.9 * base);
}

TEST(StragglersEverywhere, RecordedStepTimesAreRefusedWhereNoWorkerSteps)
{
  auto r = cs::testing::run_clustersim("validate " + src("scenarios/quickstart.yaml") +
                                       " --set cluster.stragglers.step_times=steps.csv");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("replayed by workload kinds with workers that step"), std::string::npos) << r.err;
}

TEST(StragglersEverywhere, ASpreadOutsideZeroToATenthIsRefusedWithItsPosition)
{
  for (const auto& [value, message] :
       std::vector<std::pair<std::string, std::string>>{{"-0.1", "'cluster.stragglers.spread' must not be negative"},
                                                        {"0.2", "'cluster.stragglers.spread' must be at most 0.1"}}) {
    auto r = cs::testing::run_clustersim("validate " + src("scenarios/quickstart.yaml") +
                                         " --set cluster.stragglers.spread=" + value);
    EXPECT_EQ(r.code, 2) << value;
    EXPECT_NE(r.err.find("--set:1:1: cluster.stragglers.spread=" + value + ": " + message), std::string::npos) << r.err;
  }
}

TEST(StragglersEverywhere, OneReplicaStandsForAllWithEachStageAtItsSlowestReplicasSpeed)
{
  // Replica 0 alone takes, per stage, the slowest speed any replica has there: a half-speed GPU on replica 9 is seen,
  // and a spread gives nearly what simulating every replica gives (the 7.5B row: dp 32 x tp 4).
  const std::string q = "scenarios/quickstart.yaml", one = "--backend analytical --replicas one ";
  const double base = straggler_metric(q, one, "iteration_time_s");
  EXPECT_GT(
      straggler_metric(q, one + "--set 'cluster.stragglers.slow=[{devices: [9], factor: 0.5}]'", "iteration_time_s") /
          base,
      1.8);
  const std::string row = "scenarios/reference/megatron-7.5b.yaml";
  const double all = straggler_metric(row, "--replicas all", "iteration_time_s");
  EXPECT_NEAR(straggler_metric(row, "--replicas one", "iteration_time_s") / all, 1.0, 0.005) << all;
  // --replicas auto folds the same way past its task limit: the 2,520-GPU 529.6B row runs one of its nine replicas,
  // whose slowest stage waits for the slowest of 2,520 GPUs (3.48 standard deviations below the median).
  EXPECT_EQ(straggler_metric("scenarios/reference/megatron-529.6b.yaml", "", "replicas_simulated"), 1);
  EXPECT_NEAR(straggler_metric("scenarios/reference/megatron-529.6b.yaml", "", "slowest_gpu_speed"), 1 - 0.015 * 3.483,
              1e-4);
  // Idle GPUs take no share of the spread: dp 8 on 16 GPUs waits for the slowest of 8 (1.43 standard deviations).
  EXPECT_NEAR(straggler_metric(q,
                               "--backend analytical --set workload.parallel.dp=8 --set cluster.stragglers.spread=0.02",
                               "slowest_gpu_speed"),
              1 - 0.02 * 1.4342, 1e-4);
  // Random slowdowns are drawn per device and step, and are not folded: a one-replica run says so.
  const fs::path out = fs::temp_directory_path() / ("cs_strag_one_" + std::to_string(::getpid()));
  auto r = cs::testing::run_clustersim("run " + src(q) + " --quiet " + one + "--out " + out.string() +
                                       " --set 'cluster.stragglers.random={probability: 0.5, duration: 10ms}'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--replicas one simulates replica 0 alone: random slowdowns"), std::string::npos) << r.err;
  fs::remove_all(out);
}
