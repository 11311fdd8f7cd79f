// Folding an MoE model's replicas: under balanced routing and static-ep every EP rank and group is alike, so replica
// 0 stands for all (its all-to-alls priced by their closed forms, the other groups' counted as copies). The folded
// run must agree with the full one within 1% on the step and to the byte (but rounding) on traffic, on both
// backends; a fold asked for where it cannot hold is refused.
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>

namespace fs = std::filesystem;

namespace {

using cs::testing::src;

struct Folded {
  nlohmann::json metrics;
  std::string err;
};

Folded run(const std::string& args)
{
  static int count = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("cs_fold_" + std::to_string(::getpid()) + "_" + std::to_string(++count));
  fs::remove_all(dir);
  auto r = cs::testing::run_clustersim("run " + src("scenarios/moe-mixtral.yaml") + " --out " + dir.string() + args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  std::ifstream in(dir / "report.json");
  auto json = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(dir);
  return {json.is_discarded() ? nlohmann::json::object() : json["metrics"], r.out + r.err};
}

void expect_folds_exactly(const std::string& args)
{
  const auto all = run(args + " --replicas all").metrics, one = run(args + " --replicas one").metrics;
  const double dp = all.value("replicas_simulated", 0.0);
  EXPECT_GE(dp, 8.0) << args;
  EXPECT_EQ(one.value("replicas_simulated", 0.0), 1.0) << args;
  EXPECT_LT(one.value("task_count", 0.0), all.value("task_count", 0.0) * 2 / dp) << args;
  EXPECT_NEAR(one.value("iteration_time_s", 0.0) / all.value("iteration_time_s", 1.0), 1.0, 0.01) << args;
  // Traffic: the same bytes on the wire, but that transfers move whole bytes and closed forms do not.
  for (const char* key : {"network_bytes", "network_bytes_inter_node", "network_bytes_intra_node"})
    EXPECT_NEAR(one.value(key, 0.0) / all.value(key, 1.0), 1.0, 1e-6) << args << " " << key;
  EXPECT_DOUBLE_EQ(one.value("peak_memory_bytes", 0.0), all.value("peak_memory_bytes", 1.0)) << args;
  // The folded all-to-all is its closed form; simgrid's full run moves it as flows (1.3% apart here).
  EXPECT_NEAR(one.value("alltoall_time_s", 0.0) / all.value("alltoall_time_s", 1.0), 1.0, 0.02) << args;
}

} // namespace

TEST(ReplicaFold, BalancedRoutingFoldsToOneReplicaOnBothBackends)
{
  // tp 2 x ep 8 x dp 16 on 32 H100: two EP groups of eight replicas, expert gradients reduced between the groups.
  const std::string balanced = " --set policies.moe_routing=balanced";
  expect_folds_exactly(balanced);
  expect_folds_exactly(balanced + " --backend simgrid");
  // Pipelined and overlapped: combined 1F1B over pp 2 x vpp 2.
  expect_folds_exactly(balanced + " --set workload.parallel.pp=2 --set workload.parallel.vpp=2"
                                  " --set workload.framework.overlap_moe_expert_parallel_comm=true");
}

TEST(ReplicaFold, AFoldThatCannotHoldIsRefusedAndWritesNothing)
{
  // Asked for one replica where it cannot stand for the others: the reason, exit 2, nothing written.
  const std::vector<std::pair<std::string, std::string>> cases{
      // The example's Zipf-skewed routing tells groups apart: on simgrid, whose all-to-alls are flows, nothing folds.
      {" --backend simgrid", "cannot hold for this MoE model"},
      {" --set policies.moe_routing=balanced --set policies.moe=flexmoe", "cannot hold for this MoE model"},
      // Behind an oversubscribed level, folds share the links on the analytical backend only.
      {" --backend simgrid --set policies.moe_routing=balanced --set 'cluster.network.levels=[{oversubscription: 4}, "
       "{oversubscription: 1}]'",
       "cannot hold on this network here"},
      {" --set policies.moe_routing=balanced --set cluster.network.routing=ecmp --set "
       "'cluster.network.levels=[{oversubscription: 4}, {oversubscription: 1}]'",
       "ECMP routing loads replicas differently"},
  };
  const fs::path dir = fs::temp_directory_path() / ("cs_fold_bad_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const auto& [args, words] : cases) {
    auto r = cs::testing::run_clustersim("run " + src("scenarios/moe-mixtral.yaml") + " --replicas one --out " +
                                         dir.string() + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(":[0-9]+:[0-9]+: "))) << r.err; // the key's file:line:col
    EXPECT_FALSE(fs::exists(dir)) << args;
  }
  // Under auto the same runs simulate every replica.
  EXPECT_EQ(run("").metrics.value("replicas_simulated", 0.0), 16.0);
}

namespace {

// Folded under skewed routing: the same step within 1% (to 1e-9 where every all-to-all synchronises its group), the
// same traffic, statistics and memory, at most `tasks_share` of the tasks.
void expect_skewed_fold(const std::string& args, double replicas, double tasks_share, const std::string& words)
{
  const auto all = run(args + " --replicas all").metrics;
  const auto one = run(args + " --replicas one");
  EXPECT_EQ(one.metrics.value("replicas_simulated", 0.0), replicas) << args;
  EXPECT_NE(one.err.find(words), std::string::npos) << args << "\n" << one.err;
  EXPECT_NEAR(one.metrics.value("iteration_time_s", 0.0) / all.value("iteration_time_s", 1.0), 1.0, 0.01) << args;
  for (const char* key : {"network_bytes", "network_bytes_inter_node", "network_bytes_intra_node"})
    EXPECT_NEAR(one.metrics.value(key, 0.0) / all.value(key, 1.0), 1.0, 1e-6) << args << " " << key;
  for (const char* key : {"expert_load_imbalance", "expert_load_imbalance_max", "peak_memory_bytes"})
    EXPECT_DOUBLE_EQ(one.metrics.value(key, 0.0), all.value(key, 1.0)) << args << " " << key;
  EXPECT_LT(one.metrics.value("task_count", 0.0), all.value("task_count", 0.0) * tasks_share) << args;
}

} // namespace

TEST(ReplicaFold, SkewedRoutingFoldsToTheSlowestRankOfTheSlowestGroup)
{
  // Zipf routing differs by rank and EP group. Where no device pairs ops, every layer's combine holds each rank of a
  // group until the slowest has sent, so replica 0 runs the slowest group's routing as its slowest rank, step by
  // step; the other group's all-to-alls are counted without being simulated. The step is the slowest group's, the
  // traffic and the routing statistics every group's.
  const std::string slowest = "as its slowest rank each step";
  expect_skewed_fold("", 1.0, 0.05, slowest);
  // Pipelined, one EP group spanning every replica: 1F1B and interleaved 1F1B agree to 1e-9 (measured 2026-12-05:
  // 3.660862 s and 3.601409 s folded and not).
  const std::string pp2 = " --set workload.parallel.pp=2 --set workload.batch.global=256";
  for (const std::string& schedule :
       {pp2 + " --set policies.pipeline=1f1b",
        pp2 + " --set workload.parallel.vpp=2 --set policies.pipeline=interleaved-1f1b"}) {
    const double all = run(schedule + " --replicas all").metrics.value("iteration_time_s", 0.0);
    EXPECT_NEAR(run(schedule + " --replicas one").metrics.value("iteration_time_s", 0.0) / all, 1.0, 1e-9) << schedule;
  }
}

TEST(ReplicaFold, PairedOpsUnderSkewedRoutingFoldToTheSlowestExpertParallelGroup)
{
  // Combined 1F1B runs a backward beside the next forward: a rank slow in one may be quick in the other, so the
  // slowest of each is not one rank's pair (taken so, DualPipeV's step came out 20% long). The replicas of one group
  // are built instead, running the slowest group's routing.
  expect_skewed_fold(" --set workload.framework.overlap_moe_expert_parallel_comm=true", 8.0, 0.6,
                     "runs group 1's routing, the slowest)");
  // With one EP group over every replica there is nothing to fold: --replicas one is refused.
  const fs::path dir = fs::temp_directory_path() / ("cs_fold_paired_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto r =
      cs::testing::run_clustersim("run " + src("scenarios/moe-mixtral.yaml") + " --replicas one --out " + dir.string() +
                                  " --set workload.parallel.pp=2 --set workload.batch.global=256"
                                  " --set policies.pipeline=dualpipev");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("devices run two ops side by side"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir));
}

TEST(ReplicaFold, TheSlowestRankFoldKeepsTheSlowGpusOfTheReplicasItLeavesOut)
{
  // The same fold with stragglers: the spread of speeds, and one GPU at 0.7 in a replica that is not built (GPU 18,
  // replica 9's first under tp 2). Each stage runs at the slowest speed it has in any replica, so the slow GPU still
  // sets the pace, as it does with every replica built.
  const std::string stragglers = " --set 'cluster.stragglers={spread: 0.015, slow: [{devices: [18], factor: 0.7}]}'";
  const auto all = run(stragglers + " --replicas all").metrics;
  const auto one = run(stragglers + " --replicas one");
  EXPECT_EQ(one.metrics.value("replicas_simulated", 0.0), 1.0);
  EXPECT_NEAR(one.metrics.value("iteration_time_s", 0.0) / all.value("iteration_time_s", 1.0), 1.0, 0.01);
  EXPECT_DOUBLE_EQ(one.metrics.value("slowest_gpu_speed", 0.0), all.value("slowest_gpu_speed", 1.0));
  // Without folding the slow GPU in, the step would be the faster one of the run without it.
  const auto fast = run(" --set 'cluster.stragglers={spread: 0.015}' --replicas one").metrics;
  EXPECT_GT(one.metrics.value("iteration_time_s", 0.0), fast.value("iteration_time_s", 0.0) * 1.05);
}
