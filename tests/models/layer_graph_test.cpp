#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/layer_graph.hpp"

#include <gtest/gtest.h>

namespace {

cs::GraphLayerParams layer(const std::string& name, std::vector<std::string> inputs, double activations = 1)
{
  cs::GraphLayerParams l;
  l.name = name;
  l.flops = 1;
  l.activations.value = activations;
  l.inputs = std::move(inputs);
  return l;
}

// Two towers of `n` layers each joining in a fusion stack of `f` layers.
std::vector<cs::GraphLayerParams> two_towers(int n, int f)
{
  std::vector<cs::GraphLayerParams> g;
  for (const std::string tower : {"v", "t"})
    for (int i = 0; i < n; ++i)
      g.push_back(layer(tower + std::to_string(i),
                        i == 0 ? std::vector<std::string>{} : std::vector<std::string>{tower + std::to_string(i - 1)}));
  g.push_back(layer("f0", {"v" + std::to_string(n - 1), "t" + std::to_string(n - 1)}));
  for (int i = 1; i < f; ++i)
    g.push_back(layer("f" + std::to_string(i), {"f" + std::to_string(i - 1)}));
  return g;
}

} // namespace

TEST(LayerGraph, ContiguousPartitionMinimisesTheSlowestStage)
{
  EXPECT_EQ(cs::contiguous_partition({1, 1, 1, 1}, 2), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(cs::contiguous_partition({3, 1, 1, 1}, 2), (std::vector<int>{0, 1, 4}));
  EXPECT_EQ(cs::contiguous_partition({1, 2, 3, 4, 5}, 3), (std::vector<int>{0, 3, 4, 5}));
  EXPECT_THROW(cs::contiguous_partition({1, 1}, 3), std::invalid_argument);
}

TEST(LayerGraph, BranchesAreMaximalChains)
{
  EXPECT_EQ(cs::layer_branches(two_towers(3, 2)), (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2}));
  // A layer whose input also feeds another layer starts a branch.
  std::vector<cs::GraphLayerParams> g{layer("a", {}), layer("b", {"a"}), layer("c", {"a"}), layer("d", {"b", "c"})};
  EXPECT_EQ(cs::layer_branches(g), (std::vector<int>{0, 1, 2, 3}));
}

TEST(LayerGraph, GraphStagesGiveSpareStagesToTheSlowestBranches)
{
  // 6 + 6 + 4 unit layers on 8 stages: the towers get 3 stages each and the fusion 2, 2 layers per stage.
  const auto g = two_towers(6, 4);
  auto s = cs::graph_stages(g, std::vector<double>(g.size(), 1.0), 8);
  EXPECT_EQ(s.branches, 3);
  EXPECT_EQ(s.stage_of, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7}));
  EXPECT_EQ(s.successors, (std::vector<std::vector<int>>{{1}, {2}, {6}, {4}, {5}, {6}, {7}, {}}));
  EXPECT_THROW(cs::graph_stages(g, std::vector<double>(g.size(), 1.0), 2), std::invalid_argument);
}

TEST(LayerGraph, ChainStagesRelayOutputsAcrossStages)
{
  // a -> b -> c -> d with a skip from a to d: on 4 stages, a's output crosses every boundary.
  std::vector<cs::GraphLayerParams> g{layer("a", {}, 10), layer("b", {"a"}, 1), layer("c", {"b"}, 2),
                                      layer("d", {"c", "a"}, 5)};
  auto s = cs::chain_stages(g, {1, 1, 1, 1}, 4);
  EXPECT_EQ(s.edge_bytes, (std::vector<std::vector<double>>{{10}, {10 + 1}, {10 + 2}, {}}));
  // The graph pipeline sends a's output straight to d's stage instead.
  auto d = cs::graph_stages(g, {1, 1, 1, 1}, 4);
  EXPECT_EQ(d.successors[0], (std::vector<int>{1, 3}));
  EXPECT_EQ(d.edge_bytes[0], (std::vector<double>{10, 10}));
}

TEST(LayerGraph, AKernelLayerIsPricedOverTheMicroBatch)
{
  // A kernel layer describes one sample's forward: a micro-batch of 4 runs it with batch 4.
  const auto& d = *cs::DeviceCatalog::builtin().find("h100-sxm5");
  auto model = cs::make_cost_model(d, *cs::builtin_profile("h100-sxm5"));
  auto l = layer("chain", {});
  l.kernel = cs::GemmChainKernel{2048, 2048, 64, 64, 1, "bf16"};
  const auto seconds = cs::layer_forward_seconds({l}, *model, 4, "bf16");
  EXPECT_DOUBLE_EQ(seconds[0], model->predict(cs::GemmChainKernel{2048, 2048, 64, 64, 4, "bf16"}).total);
}
