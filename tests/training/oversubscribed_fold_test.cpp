// Folding replicas behind an oversubscribed fabric: replica 0 is simulated alone, each of its flows with its copies'
// share of the links they cross together, and its data-parallel rings priced at the share their copies leave. The
// reference is a run of every replica on the simgrid backend, whose flows share links fairly, as the copies of a
// symmetric step do; the analytical backend's full run queues colliding flows one after another instead, so its
// replicas drift apart and contend less.
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>

namespace fs = std::filesystem;

namespace {

using cs::testing::src;

struct OversubscribedRun {
  nlohmann::json metrics;
  std::string text;
  nlohmann::json breakdown;
};

OversubscribedRun run_oversubscribed(const std::string& args,
                                     const std::string& scenario = "tests/data/oversubscribed-fold.yaml")
{
  static int count = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("cs_over_fold_" + std::to_string(::getpid()) + "_" + std::to_string(++count));
  fs::remove_all(dir);
  auto r = cs::testing::run_clustersim("run " + src(scenario) + " --out " + dir.string() + args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  std::ifstream in(dir / "report.json");
  auto json = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(dir);
  if (json.is_discarded())
    return {nlohmann::json::object(), r.out + r.err, nlohmann::json::object()};
  return {json["metrics"], r.out + r.err, json["breakdown"]};
}

void expect_fold_matches_fair_sharing(const std::string& args)
{
  const auto fair = run_oversubscribed(args + " --backend simgrid --replicas all");
  const auto queued = run_oversubscribed(args + " --replicas all");
  const auto folded = run_oversubscribed(args + " --replicas one");
  EXPECT_EQ(folded.metrics.value("replicas_simulated", 0.0), 1.0) << args;
  EXPECT_NE(folded.text.find("the others folded in (each flow with its copies' share of the oversubscribed links)"),
            std::string::npos)
      << folded.text;
  const double step = folded.metrics.value("iteration_time_s", 0.0);
  EXPECT_NEAR(step / fair.metrics.value("iteration_time_s", 1.0), 1.0, 0.01) << args;
  // Traffic: the same bytes, but that transfers move whole bytes and closed forms do not (1e-8 apart here).
  for (const char* key : {"network_bytes", "network_bytes_inter_node", "network_bytes_intra_node"}) {
    EXPECT_NEAR(folded.metrics.value(key, 0.0) / queued.metrics.value(key, 1.0), 1.0, 1e-6) << args << " " << key;
    EXPECT_NEAR(fair.metrics.value(key, 0.0) / queued.metrics.value(key, 1.0), 1.0, 1e-6) << args << " " << key;
  }
  // The oversubscribed pods are felt: with them at 1:1 the folded step is shorter.
  const auto open = run_oversubscribed(args + " --replicas one --set 'cluster.network.levels[1].oversubscription=1'");
  EXPECT_LT(open.metrics.value("iteration_time_s", 0.0), step * 0.99) << args;
}

} // namespace

TEST(OversubscribedFold, ReplicaZeroWithItsCopiesShareRunsAsEveryReplica)
{
  expect_fold_matches_fair_sharing(""); // pipeline sends across the pods
  // Data parallelism alone, pods 16:1: each pod's ring channels (eight, one a GPU) leave through an uplink that
  // carries two NICs' worth. The folded ring is its closed form at that share.
  expect_fold_matches_fair_sharing(" --set workload.parallel.placement=tp-pp-dp --set workload.parallel.pp=1"
                                   " --set workload.parallel.dp=128 --set workload.batch.global=512"
                                   " --set 'cluster.network.levels[1].oversubscription=16'");
}

TEST(OversubscribedFold, AnMoeReplicaStandsForTheOthersWithItsAllToAllsOnTheSharedUplinks)
{
  // EP groups of 64 over two pods joined 4:1 (and 2:1), balanced routing: replica 0 stands for the other 127, its
  // all-to-alls' closed forms their flows replayed with the other EP group's on the links between switches
  // (all_to_all_v_fabric_replay), each starting as the one before on its group left the ranks (AllToAllChains), and
  // its expert-data-parallel ring with the other EP ranks' rings beside it. Measured 2026-12-06: simgrid 23.63 ms,
  // the analytical full run 23.61 (-0.06%), the fold 23.626 (-0.02%); at 2:1 20.04, 19.72 (-1.6%) and 20.042
  // (+0.01%). With every all-to-all starting together the fold gave 23.68 (+0.2%) and 19.78 (-1.3%).
  const std::string moe = "tests/data/oversubscribed-moe-fold.yaml";
  double step = 0;
  for (const std::string over : {"", " --set 'cluster.network.levels[1].oversubscription=2'"}) {
    const auto fair = run_oversubscribed(over + " --backend simgrid --replicas all", moe);
    const auto queued = run_oversubscribed(over + " --replicas all", moe);
    const auto folded = run_oversubscribed(over, moe); // auto folds behind the oversubscribed level
    EXPECT_EQ(folded.metrics.value("replicas_simulated", 0.0), 1.0);
    EXPECT_NE(folded.text.find("the others folded in (each flow with its copies' share of the oversubscribed links)"),
              std::string::npos)
        << folded.text;
    const double reference = fair.metrics.value("iteration_time_s", 1.0);
    EXPECT_NEAR(folded.metrics.value("iteration_time_s", 0.0) / reference, 1.0, 0.01) << over;
    EXPECT_NEAR(queued.metrics.value("iteration_time_s", 0.0) / reference, 1.0, 0.02) << over;
    for (const char* key : {"network_bytes", "network_bytes_inter_node", "network_bytes_intra_node"})
      EXPECT_NEAR(folded.metrics.value(key, 0.0) / queued.metrics.value(key, 1.0), 1.0, 1e-6) << key;
    if (over.empty())
      step = folded.metrics.value("iteration_time_s", 0.0);
  }
  const auto open = run_oversubscribed(" --set 'cluster.network.levels[1].oversubscription=1'", moe);
  EXPECT_LT(open.metrics.value("iteration_time_s", 0.0), step * 0.9);
}

TEST(OversubscribedFold, APipelinedMoeFoldMatchesWhereEachStagesGroupHasUplinksOfItsOwn)
{
  // Two stages (1F1B, two microbatches a replica) behind 4:1 pods. Under tp-dp-pp each stage's EP group of 64 has two
  // pods of its own: its all-to-alls meet only their own copies on the uplinks, as the fold counts them. Measured
  // 2026-12-06: simgrid 40.38 ms, the fold 40.39 (40.81 with every all-to-all starting together). Under tp-pp-dp the
  // two stages' groups cross every pod's uplinks, and only the closed forms' link shares let the fold see the other
  // stage's all-to-alls: simgrid 39.89, the fold 37.95 (-4.9%; 38.32, -3.9%, while a closed form waited until its
  // shares fitted; 35.89, -10%, without the shares).
  const std::string moe = "tests/data/oversubscribed-moe-fold.yaml";
  for (const auto& [placement, tolerance] :
       std::vector<std::pair<std::string, double>>{{"tp-dp-pp", 0.01}, {"tp-pp-dp", 0.05}}) {
    const std::string pipelined = " --set workload.model.layers=2 --set workload.parallel.pp=2"
                                  " --set workload.parallel.dp=64 --set workload.batch.global=128"
                                  " --set policies.pipeline=1f1b --set workload.parallel.placement=" +
                                  placement;
    const auto fair = run_oversubscribed(pipelined + " --backend simgrid --replicas all", moe);
    const auto folded = run_oversubscribed(pipelined, moe);
    EXPECT_EQ(folded.metrics.value("replicas_simulated", 0.0), 1.0) << placement;
    EXPECT_NEAR(folded.metrics.value("iteration_time_s", 0.0) / fair.metrics.value("iteration_time_s", 1.0), 1.0,
                tolerance)
        << placement;
    for (const char* key : {"network_bytes", "network_bytes_inter_node", "network_bytes_intra_node"})
      EXPECT_NEAR(folded.metrics.value(key, 0.0) / fair.metrics.value(key, 1.0), 1.0, 1e-6) << placement << key;
  }
}

TEST(OversubscribedFold, ADualPipeFoldMovesItsPipelineSendsBesideTheAllToAllsOnTheirUplinks)
{
  // DualPipeV under tp-dp-pp behind 2:1 pods, four microbatches a replica: each stage's EP group has two pods of its
  // own, and the sends between the stages cross the pod uplinks its all-to-alls hold. simgrid with every replica
  // (measured 2026-12-07, 15 s of wall time, too slow to rerun here): 82.77 ms. The fold moves the sends in what the
  // all-to-alls leave: 86.21 ms (+4.2%); when a send waited out every all-to-all holding its uplinks, 89.78 (+8.5%).
  const auto folded = run_oversubscribed(" --set workload.model.layers=4 --set workload.parallel.pp=2"
                                         " --set workload.parallel.dp=64 --set workload.batch.global=256"
                                         " --set policies.pipeline=dualpipev --set workload.parallel.placement=tp-dp-pp"
                                         " --set cluster.network.levels[1].oversubscription=2",
                                         "tests/data/oversubscribed-moe-fold.yaml");
  EXPECT_EQ(folded.metrics.value("replicas_simulated", 0.0), 1.0);
  EXPECT_NEAR(folded.metrics.value("iteration_time_s", 0.0) / 82.77e-3, 1.0, 0.06);
}

TEST(OversubscribedFold, ZipfRoutingFoldsToTheSlowestRankWithTheOthersAsCopies)
{
  // The same fabric under drifting Zipf routing: the ranks route differently, so replica 0 runs the slowest group's
  // routing as its slowest rank each step, and every other replica's transfers and collectives are copies of its own on
  // the uplinks. Measured 2026-12-06 at 4:1: simgrid 66.39 ms, the fold 66.63 (+0.36%); at 1:1 64.23 and 64.24.
  const std::string moe = "tests/data/oversubscribed-moe-fold.yaml", zipf = " --set policies.moe_routing=zipf";
  const auto fair = run_oversubscribed(zipf + " --backend simgrid --replicas all", moe);
  const auto queued = run_oversubscribed(zipf + " --replicas all", moe);
  const auto folded = run_oversubscribed(zipf + " --replicas one", moe);
  EXPECT_EQ(folded.metrics.value("replicas_simulated", 0.0), 1.0);
  EXPECT_NEAR(folded.metrics.value("iteration_time_s", 0.0) / fair.metrics.value("iteration_time_s", 1.0), 1.0, 0.01);
  for (const char* key : {"network_bytes", "network_bytes_inter_node", "network_bytes_intra_node"})
    EXPECT_NEAR(folded.metrics.value(key, 0.0) / queued.metrics.value(key, 1.0), 1.0, 1e-6) << key;
  // The expert-data-parallel rings are closed forms with every other replica's beside them, all starting together
  // when the dense buckets end, as under balanced routing. So do simgrid's: each rank's ring waits on its stream for
  // the dense ring before it to complete (8.94 ms of gradient sync in both; 7.70 in simgrid while a ring could start
  // once its own channel-0 sends of the one before had ended).
  const char* sync = "communication_gradient_sync_s";
  const auto balanced = run_oversubscribed(" --replicas one", moe);
  EXPECT_NEAR(folded.breakdown.value(sync, 0.0) / balanced.breakdown.value(sync, 1.0), 1.0, 1e-9);
  EXPECT_NEAR(folded.breakdown.value(sync, 0.0) / fair.breakdown.value(sync, 1.0), 1.0, 0.01);
}

TEST(OversubscribedFold, AFoldThatCannotHoldIsRefusedAndWritesNothing)
{
  const std::vector<std::pair<std::string, std::string>> cases{
      {" --set cluster.network.routing=ecmp", "ECMP routing loads replicas differently"},
      {" --backend simgrid", "folded with their share of its links on the analytical backend"},
  };
  const fs::path dir = fs::temp_directory_path() / ("cs_over_fold_bad_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const auto& [args, words] : cases) {
    auto r = cs::testing::run_clustersim("run " + src("tests/data/oversubscribed-fold.yaml") +
                                         " --replicas one --out " + dir.string() + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(":[0-9]+:[0-9]+: "))) << r.err;
    EXPECT_FALSE(fs::exists(dir)) << args;
  }
}

TEST(OversubscribedFold, TheTaskLimitSaysWhichFoldWouldApply)
{
  const fs::path dir = fs::temp_directory_path() / ("cs_over_fold_limit_" + std::to_string(::getpid()));
  // Dense and MoE alike: the limit names the fold that would have applied.
  for (const auto& [scenario, replicas] : {std::pair<std::string, int>{"tests/data/oversubscribed-fold.yaml", 64},
                                           {"tests/data/oversubscribed-moe-fold.yaml", 128}}) {
    auto r =
        cs::testing::run_clustersim("run " + src(scenario) + " --replicas all --max-tasks 5000 --out " + dir.string());
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(fmt::format("fold the {} data-parallel replicas into replica 0, each flow with its copies' "
                                     "share",
                                     replicas)),
              std::string::npos)
        << r.err;
  }
  // Skewed routing: the slowest rank where no device pairs ops, else the slowest group's replicas.
  const std::string moe = "run " + src("tests/data/oversubscribed-moe-fold.yaml") +
                          " --set policies.moe_routing=zipf --replicas all --max-tasks 5000 --out " + dir.string();
  auto skewed = cs::testing::run_clustersim(moe);
  EXPECT_EQ(skewed.code, 2) << skewed.err;
  EXPECT_NE(skewed.err.find("fold the 128 data-parallel replicas into replica 0, running the slowest EP group's "
                            "slowest rank each step"),
            std::string::npos)
      << skewed.err;
  auto paired = cs::testing::run_clustersim(moe + " --set workload.framework.overlap_moe_expert_parallel_comm=true");
  EXPECT_EQ(paired.code, 2) << paired.err;
  EXPECT_NE(paired.err.find("fold the 128 data-parallel replicas into one EP group's 64, the slowest routing's"),
            std::string::npos)
      << paired.err;
  auto ecmp = cs::testing::run_clustersim("run " + src("tests/data/oversubscribed-fold.yaml") +
                                          " --set cluster.network.routing=ecmp --max-tasks 5000 --out " + dir.string());
  EXPECT_EQ(ecmp.code, 2) << ecmp.err;
  EXPECT_NE(ecmp.err.find("no replica fold applies (ECMP routing"), std::string::npos) << ecmp.err;
  EXPECT_FALSE(fs::exists(dir));
}
