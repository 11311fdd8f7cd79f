// Layers per pipeline stage: even, and balanced by cost around the output layer.
#include "sim/scenario/scenario.hpp"
#include "tests/test_support.hpp"
#include "tests/training_helpers.hpp"
#include "workloads/training/stage_costs.hpp"
#include "workloads/training/training_workload.hpp"

#include "base/registry.hpp"
#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"
#include "policies/sync/gradient_sync.hpp"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <numeric>

namespace {

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

TEST(PipelinePartition, EvenSplitsGiveTheRemainderToTheFirstStages)
{
  EXPECT_EQ(cs::partition_layers(24, cs::StageMap::interleaved(4, 1), 1.0, 5.0, false), (std::vector<int>{6, 6, 6, 6}));
  EXPECT_EQ(cs::partition_layers(23, cs::StageMap::interleaved(4, 1), 1.0, 5.0, false), (std::vector<int>{6, 6, 6, 5}));
}

TEST(PipelinePartition, BalancedLightensTheOutputStage)
{
  // 24 layers of 1 s over 4 stages, output layer 3 s: the last stage keeps 4 layers (4 + 3 = 7 s), the others
  // share 20 (7, 7, 6): the slowest stage takes 7 s instead of the even split's 6 + 3 = 9 s.
  auto p = cs::partition_layers(24, cs::StageMap::interleaved(4, 1), 1.0, 3.0, true);
  EXPECT_EQ(p, (std::vector<int>{7, 7, 6, 4}));
  EXPECT_EQ(sum(p), 24);
  // No output cost: balanced is even.
  EXPECT_EQ(cs::partition_layers(24, cs::StageMap::interleaved(4, 1), 1.0, 0.0, true), (std::vector<int>{6, 6, 6, 6}));
  // A huge output layer still leaves every stage at least one layer.
  p = cs::partition_layers(8, cs::StageMap::interleaved(4, 1), 1.0, 100.0, true);
  EXPECT_EQ(p.back(), 1);
  EXPECT_EQ(sum(p), 8);
  for (int n : p)
    EXPECT_GE(n, 1);
  // Interleaved (v = 2): the last device (stages 3 and 7) keeps 4 layers, 2 per chunk; the others 7, 7, 6.
  EXPECT_EQ(cs::partition_layers(24, cs::StageMap::interleaved(4, 2), 1.0, 3.0, true),
            (std::vector<int>{4, 4, 3, 2, 3, 3, 3, 2}));
}

TEST(PipelinePartition, BalancedAlsoLightensTheEmbeddingStage)
{
  // The slowest device under a partition of one chunk per device, and the best any partition reaches (by brute
  // force over every split of `layers` into pp >= 1 parts).
  auto slowest = [](const std::vector<int>& p, double head, double embedding) {
    double t = 0;
    for (size_t d = 0; d < p.size(); ++d)
      t = std::max(t, p[d] + (d == 0 ? embedding : 0.0) + (d + 1 == p.size() ? head : 0.0));
    return t;
  };
  auto best = [&](int layers, int pp, double head, double embedding) {
    double out = INFINITY;
    std::vector<int> p(pp, 1);
    std::function<void(int, int)> go = [&](int d, int left) {
      if (d == pp - 1) {
        p[d] = left;
        out = std::min(out, slowest(p, head, embedding));
        return;
      }
      for (int n = 1; n <= left - (pp - 1 - d); ++n) {
        p[d] = n;
        go(d + 1, left - n);
      }
    };
    go(0, layers);
    return out;
  };
  for (int pp : {2, 3, 4, 6})
    for (double embedding : {0.0, 1.0, 2.5, 7.0})
      for (double head : {0.0, 3.0, 9.0}) {
        const auto p = cs::partition_layers(24, cs::StageMap::interleaved(pp, 1), 1.0, head, true, embedding);
        EXPECT_EQ(sum(p), 24);
        EXPECT_DOUBLE_EQ(slowest(p, head, embedding), best(24, pp, head, embedding))
            << "pp " << pp << " embedding " << embedding << " head " << head;
      }
  // Two devices split the layers between the two ends alone: 6 + 1 against 4 + 3.
  EXPECT_EQ(cs::partition_layers(10, cs::StageMap::interleaved(2, 1), 1.0, 3.0, true, 1.0), (std::vector<int>{6, 4}));
  // Without an embedding cost the split is the one above.
  EXPECT_EQ(cs::partition_layers(24, cs::StageMap::interleaved(4, 1), 1.0, 3.0, true, 0.0),
            (std::vector<int>{7, 7, 6, 4}));
}

} // namespace

TEST(PipelinePlacement, TpPpDpKeepsPipelinesInANodeAndTpDpPpKeepsReplicasInANode)
{
  // gpt-pipeline: pp 4 x dp 4 over 2 nodes of 8. tp-pp-dp: two whole pipelines per node, so only gradient sync
  // crosses nodes. tp-dp-pp: stages 0-1 of every replica on node 0, 2-3 on node 1, so only p2p crosses nodes.
  for (const char* placement : {"tp-pp-dp", "tp-dp-pp"}) {
    cs::Scenario s = cs::load_scenario(std::string(CS_SOURCE_DIR) + "/scenarios/gpt-pipeline.yaml",
                                       {std::string("workload.parallel.placement=") + placement});
    const auto& device = *cs::DeviceCatalog::builtin().find(s.cluster.device);
    const cs::PlatformSpec platform = cs::build_platform_spec(s.cluster, device);
    auto cost = cs::make_cost_model(device, *cs::builtin_profile(device.name));
    const auto built = cs::testing::build_transformer_training(cs::workload_as<cs::TrainingWorkload>(s).params, *cost,
                                                               4, 4, "interleaved-1f1b", platform);
    const auto& t = built.training;
    int p2p_across = 0, sync_across = 0;
    for (const auto& task : t.graph.tasks())
      if (task.kind == cs::TaskKind::TRANSFER && platform.topology.hop_level(task.host, task.dst) > 0)
        ++(t.graph.names()[task.labels.phase] == "p2p" ? p2p_across : sync_across);
    if (std::string(placement) == "tp-pp-dp") {
      EXPECT_EQ(p2p_across, 0);
      EXPECT_GT(sync_across, 0);
    } else {
      EXPECT_GT(p2p_across, 0);
      EXPECT_EQ(sync_across, 0);
    }
    EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.parallel.layout(16).host(1, 2),
              std::string(placement) == "tp-pp-dp" ? 6 : 9);
  }
}

namespace {

// One run of Llama 3 8B on 8 H100 (TP 2, PP 4) with `sets`: its iteration time, or -1 when refused (err holds why).
double layout_run(const std::string& sets, std::string* err = nullptr)
{
  static int n = 0;
  const auto file = cs::testing::write_temp(
      "layout.yaml", "name: layout\nbackend: analytical\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\n"
                     "workload:\n  kind: transformer-training\n  model: {preset: llama3-8b, recompute: none}\n"
                     "  batch: {global: 32, micro: 1}\n  parallel: {tp: 2, pp: 4}\n");
  const auto out = cs::testing::fresh_dir("layout_out_" + std::to_string(n++));
  const auto r = cs::testing::clustersim("run " + file.string() + " " + sets + " --out " + out.string() + " --quiet");
  if (err)
    *err = r.err;
  if (r.code != 0)
    return -1;
  return cs::testing::read_json(out / "report.json").at("metrics").at("iteration_time_s").get<double>();
}

} // namespace

TEST(PipelineLayout, EmbeddingAndLossSlotsAreTheLayoutWrittenOut)
{
  // 30 layers and the two slots over 4 stages: 7, 8, 8, 7 layers.
  const double accounted =
      layout_run("--set workload.model.layers=30 --set workload.parallel.account_for_embedding=true "
                 "--set workload.parallel.account_for_loss=true");
  const double written = layout_run("--set workload.model.layers=30 --set 'workload.parallel.stage_layers=[7,8,8,7]'");
  ASSERT_GT(accounted, 0);
  EXPECT_DOUBLE_EQ(accounted, written);
  std::string err;
  EXPECT_LT(layout_run("--set workload.parallel.account_for_loss=true", &err), 0); // 33 slots over 4 stages
  EXPECT_NE(err.find("the embedding's and loss's slots do not divide"), std::string::npos) << err;
  EXPECT_LT(layout_run("--set workload.parallel.account_for_loss=true --set 'workload.parallel.stage_layers=[8,8,8,8]'",
                       &err),
            0);
  EXPECT_NE(err.find("workload.parallel.account_for_loss"), std::string::npos) << err;
}

TEST(PipelineLayout, StagesOfNoLayersHoldOnlyTheEmbeddingOrTheLoss)
{
  const double even = layout_run(""), ends = layout_run("--set 'workload.parallel.stage_layers=[0,16,16,0]'");
  ASSERT_GT(ends, 0);
  EXPECT_GT(ends, even); // two stages do all the layers' work
  std::string err;
  EXPECT_LT(layout_run("--set 'workload.parallel.stage_layers=[-1,17,16,0]'", &err), 0);
  EXPECT_NE(err.find("entries of 0 or more layers"), std::string::npos) << err;
}

TEST(PipelineLayout, InterleavedChunksMayBeUneven)
{
  const std::string interleaved = "--set workload.parallel.vpp=2 --set policies.pipeline=interleaved-1f1b ";
  const double even = layout_run(interleaved);
  // Lighter first and last chunks for the embedding and the 128K-entry output layer.
  const double lighter = layout_run(interleaved + "--set 'workload.parallel.stage_layers=[3,5,4,4,4,4,5,3]'");
  ASSERT_GT(even, 0);
  ASSERT_GT(lighter, 0);
  EXPECT_LT(lighter, even);
}
