// HSDP (workload.parallel.dp_replicate): ZeRO shards over groups of dp / dp_replicate replicas, each gradient is
// reduce-scattered inside its group and its shard all-reduced across the groups, and the gathers stay in the group.
#include "models/transformer/memory_footprint.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_models.hpp"
#include "tests/test_support.hpp"
#include "workloads/training/beside_communication.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

namespace {

namespace fs = std::filesystem;

cs::MemoryLayout sharded_layout(int zero, int replicate)
{
  cs::MemoryLayout l;
  l.parallel.tp = 2;
  l.parallel.dp = 8;
  l.parallel.zero = zero;
  l.parallel.dp_replicate = replicate;
  l.layers_on_device = 4;
  return l;
}

struct HsdpRun {
  nlohmann::json trace, report;
};

// Two layers of torchtitan's Llama 3 8B FSDP row (8 GPUs of one node), one iteration.
HsdpRun run_8b(const std::string& args)
{
  static int n = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("cs_hsdp_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  auto r = cs::testing::run_clustersim("run " + cs::testing::src("scenarios/reference/torchtitan-llama3-8b-fsdp.yaml") +
                                       " --quiet --trace --out " + dir.string() +
                                       " --set workload.model.layers=2 --set workload.iterations=1 " + args);
  EXPECT_EQ(r.code, 0) << r.err;
  std::ifstream trace_in(dir / "trace.json"), report_in(dir / "report.json");
  HsdpRun out{nlohmann::json::parse(trace_in, nullptr, false), nlohmann::json::parse(report_in, nullptr, false)};
  fs::remove_all(dir);
  return out;
}

// GPU index of "nodeN/gpuK" on 8-GPU nodes.
int gpu_of(const std::string& name)
{
  std::smatch m;
  EXPECT_TRUE(std::regex_search(name, m, std::regex("node([0-9]+)/gpu([0-9]+)"))) << name;
  return std::stoi(m[1]) * 8 + std::stoi(m[2]);
}

// Per category, transfers inside a group of `shard` consecutive GPUs, between the same places of two groups, other.
std::map<std::string, std::array<int, 3>> transfer_kinds(const nlohmann::json& trace, int shard)
{
  std::map<std::pair<int, int>, std::string> threads;
  std::map<std::string, std::array<int, 3>> out;
  for (const auto& e : trace["traceEvents"])
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name")
      threads[{e["pid"], e["tid"]}] = e["args"]["name"];
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || !e.contains("args") || !e["args"].contains("to"))
      continue;
    const int src = gpu_of(threads[{e["pid"], e["tid"]}]), dst = gpu_of(e["args"]["to"]);
    out[e["cat"]][src / shard == dst / shard ? 0 : src % shard == dst % shard ? 1 : 2]++;
  }
  return out;
}

} // namespace

TEST(Hsdp, TheShardedStateIsDividedOverOneShardGroup)
{
  const cs::ModelParams m = cs::testing::llama_block(16, 4096, 14336, 32, 4096, 128256, "none");
  // ZeRO-3 over dp 8 in two replicas of four: the weights', gradients' and optimizer's shards double, the rest stays.
  const auto whole = cs::transformer_memory(m, 1, sharded_layout(3, 1));
  const auto halves = cs::transformer_memory(m, 1, sharded_layout(3, 2));
  EXPECT_NEAR(halves.parameters / whole.parameters, 2.0, 1e-9);
  EXPECT_NEAR(halves.gradients / whole.gradients, 2.0, 1e-9);
  EXPECT_NEAR(halves.optimizer / whole.optimizer, 2.0, 1e-9);
  EXPECT_EQ(halves.activations, whole.activations);
  EXPECT_EQ(halves.buffers, whole.buffers);
  // ZeRO-1 (Megatron-Core's distributed optimizer with two instances): the optimizer state alone.
  const auto one = cs::transformer_memory(m, 1, sharded_layout(1, 1));
  const auto two = cs::transformer_memory(m, 1, sharded_layout(1, 2));
  EXPECT_NEAR(two.optimizer / one.optimizer, 2.0, 1e-9);
  EXPECT_EQ(two.parameters, one.parameters);
  EXPECT_EQ(two.gradients, one.gradients);
}

TEST(Hsdp, GradientsMeetTheirShardGroupThenTheSamePlaceOfTheOthers)
{
  // 8 GPUs as 2 replicas of 4-GPU shard groups. Per bucket of B bytes a member: a reduce-scatter in each group sends
  // (4 - 1) B, and each member's B / 4 all-reduced over the 2 groups sends 2 (2 - 1) / 2 B / 4 from each of 2, for
  // each of 4 places: 2 x 3 B + 4 x B / 4 x 2 = 8 B, against 7 B over the 8. The gathers stay in the group: 2 x 3 B
  // against 7 B.
  const HsdpRun whole = run_8b("");
  const HsdpRun hsdp = run_8b("--set workload.parallel.dp_replicate=2");
  EXPECT_NEAR(cs::testing::trace_bytes(hsdp.trace, "gradient-sync") /
                  cs::testing::trace_bytes(whole.trace, "gradient-sync"),
              8.0 / 7.0, 1e-6);
  EXPECT_NEAR(cs::testing::trace_bytes(hsdp.trace, "parameter-gather") /
                  cs::testing::trace_bytes(whole.trace, "parameter-gather"),
              6.0 / 7.0, 1e-6);
  const auto kinds = transfer_kinds(hsdp.trace, 4);
  EXPECT_GT(kinds.at("gradient-sync")[0], 0);
  EXPECT_GT(kinds.at("gradient-sync")[1], 0); // the all-reduces across the groups
  EXPECT_EQ(kinds.at("gradient-sync")[2], 0);
  EXPECT_GT(kinds.at("parameter-gather")[0], 0);
  EXPECT_EQ(kinds.at("parameter-gather")[1] + kinds.at("parameter-gather")[2], 0);
  // Memory: the 8B row's fp32 master shards and Adam moments (12 bytes a parameter) and its fp32 gradient shards (4)
  // over 4 GPUs instead of 8.
  const double params = hsdp.report["metrics"].value("parameter_count", 0.0);
  ASSERT_GT(params, 0);
  const auto& a = hsdp.report["breakdown"];
  const auto& b = whole.report["breakdown"];
  EXPECT_NEAR((a.value("memory_optimizer_bytes", 0.0) + a.value("memory_parameters_bytes", 0.0)) -
                  (b.value("memory_optimizer_bytes", 0.0) + b.value("memory_parameters_bytes", 0.0)),
              12.0 * params * (1.0 / 4 - 1.0 / 8), 1e-3 * params);
  EXPECT_NEAR(a.value("memory_gradients_bytes", 0.0) - b.value("memory_gradients_bytes", 0.0),
              4.0 * params * (1.0 / 4 - 1.0 / 8), 1e-3 * params);
}

TEST(Hsdp, OneReplicaStandsForTheOthers)
{
  // Two nodes: each node a shard group, the shards all-reduced between the nodes; and with two CP ranks a replica,
  // whose CP rank 0 stands for the other in the graph (its all-reduces count for both). The fold simulates replica 0
  // and gives every replica's step and traffic; the traffic between the nodes is the same with cp 2 as with cp 1 (the
  // same gradients, sharded over 8 places either way).
  double inter = 0;
  for (const std::string cp : {"1", "2"}) {
    const std::string two_nodes =
        "--set cluster.nodes=2 --set workload.batch.global=" + std::string(cp == "1" ? "32" : "16") +
        " --set workload.parallel.dp_replicate=2 --set workload.parallel.cp=" + cp;
    const HsdpRun all = run_8b(two_nodes + " --replicas all");
    const HsdpRun one = run_8b(two_nodes + " --replicas one");
    EXPECT_EQ(one.report["metrics"].value("replicas_simulated", 0.0), 1.0);
    EXPECT_NEAR(one.report["metrics"].value("iteration_time_s", 0.0) /
                    all.report["metrics"].value("iteration_time_s", 1.0),
                1.0, 1e-6)
        << cp;
    for (const char* key : {"network_bytes", "network_bytes_inter_node", "network_bytes_intra_node"})
      EXPECT_NEAR(one.report["metrics"].value(key, 0.0) / all.report["metrics"].value(key, 1.0), 1.0, 1e-6)
          << key << " cp " << cp;
    const double between = all.report["metrics"].value("network_bytes_inter_node", 0.0);
    EXPECT_GT(between, 0.0);
    if (inter > 0) {
      EXPECT_NEAR(between / inter, 1.0, 1e-6);
    }
    inter = between;
  }
}

TEST(Hsdp, ReplicasThatCannotHoldAreRefusedAndWriteNothing)
{
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--set workload.parallel.zero=0 --set workload.parallel.dp_replicate=2", "it needs zero 1, 2 or 3"},
      {"--set workload.parallel.dp_replicate=3", "must divide dp = 8"},
      {"--set workload.parallel.dp_replicate=8", "shard groups of one rank"},
      {"--set workload.parallel.dp_replicate=0", "dp_replicate"},
      {"--set workload.parallel.dp_replicate=2 --set workload.model.moe.experts=8 --set workload.model.moe.top_k=2",
       "routed experts"},
  };
  const fs::path dir = fs::temp_directory_path() / ("cs_hsdp_bad_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const auto& [args, words] : cases) {
    auto r =
        cs::testing::run_clustersim("run " + cs::testing::src("scenarios/reference/torchtitan-llama3-8b-fsdp.yaml") +
                                    " --out " + dir.string() + " " + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(":[0-9]+:[0-9]+: "))) << r.err;
    EXPECT_FALSE(fs::exists(dir)) << args;
  }
}

TEST(Hsdp, TheCrossGroupAllReduceTakesItsSharesOfTheSmsToo)
{
  // Compute beside ZeRO's reductions is slowed by what they take (comm_sm_fraction); under HSDP a reduction is the
  // shard group's reduce-scatter and the all-reduce of its shard across the groups, here between two nodes.
  const cs::PlatformSpec platform = cs::testing::h100_nodes(2);
  cs::ParallelLayout whole;
  whole.dp = 16;
  whole.zero = 3;
  cs::ParallelLayout halves = whole;
  halves.dp_replicate = 2;
  const cs::ZeroGroups w = cs::zero_groups(whole, platform), h = cs::zero_groups(halves, platform);
  EXPECT_FALSE(w.across);
  ASSERT_TRUE(h.across);
  EXPECT_EQ(w.members, 16);
  EXPECT_EQ(h.members, 8);
  EXPECT_EQ(h.shard.nodes, 1); // one node's GPUs
  EXPECT_EQ(h.across->nodes, 2);
  const double bytes = 256e6;
  const double inside = cs::choose_collective("reduce-scatter", "auto", bytes, h.shard).seconds;
  const double across = cs::choose_collective("all-reduce", "auto", bytes / 8, *h.across).seconds;
  EXPECT_DOUBLE_EQ(h.reduce_seconds(bytes, true), inside + across);
  EXPECT_DOUBLE_EQ(w.reduce_seconds(bytes, true),
                   cs::choose_collective("reduce-scatter", "auto", bytes, w.shard).seconds);
  EXPECT_DOUBLE_EQ(h.reduce_seconds(bytes, false), cs::choose_collective("all-reduce", "auto", bytes, h.shard).seconds);
}
