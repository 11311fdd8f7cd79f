// `clustersim kernels`: the pieces it lists are the ones the run prices (an MoE model's layer and its routed experts,
// not a dense MLP it does not have), and a scenario it cannot list exits 2.
#include "tests/cli/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>

namespace {

using cs::testing::run_clustersim;

struct Listing {
  std::set<std::string> pieces;
  std::set<std::pair<std::string, std::string>> kernels; // (piece, kernel)
  double flops(const std::string& piece, const std::string& kernel) const { return flops_.at({piece, kernel}); }
  std::map<std::pair<std::string, std::string>, double> flops_;
};

Listing list(const std::string& args)
{
  const auto r = run_clustersim("kernels " + args + " --json");
  EXPECT_EQ(r.code, 0) << r.err;
  Listing l;
  for (const auto& k : nlohmann::json::parse(r.out)) {
    l.pieces.insert(k.at("piece").get<std::string>());
    const std::pair<std::string, std::string> key{k.at("piece"), k.at("kernel")};
    l.kernels.insert(key);
    if (k.at("pass") == "forward")
      l.flops_[key] += k.at("flops").get<double>();
  }
  return l;
}

} // namespace

TEST(KernelsCommand, ADenseModelListsItsLayerHeadAndEmbedding)
{
  const Listing l = list(std::string(CS_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  EXPECT_EQ(l.pieces, (std::set<std::string>{"layer", "head", "embedding"}));
  EXPECT_TRUE(l.kernels.count({"layer", "ffn_up_gemm"}) || l.kernels.count({"layer", "ffn_gate_up_gemm"}));
}

TEST(KernelsCommand, AnMoeModelListsItsMoeLayerAndTheGpusExpertsNotADenseMlp)
{
  // Mixtral 8x7B, every layer MoE, 8 experts top-2 over ep 8 (one expert a GPU): the expert gets the microbatch's
  // tokens x top_k, and the layer's dense part has the router instead of an MLP.
  const std::string scenario = std::string(CS_SOURCE_DIR) + "/scenarios/moe-mixtral.yaml";
  const Listing l = list(scenario);
  EXPECT_EQ(l.pieces, (std::set<std::string>{"moe_layer", "experts", "head", "embedding"}));
  EXPECT_TRUE(l.kernels.count({"moe_layer", "router_gemm"}));
  EXPECT_TRUE(l.kernels.count({"moe_layer", "attention"}));
  EXPECT_FALSE(l.kernels.count({"moe_layer", "ffn_gate_up_gemm"}));
  const auto text = run_clustersim("kernels " + scenario);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("experts: 1 a GPU at"), std::string::npos) << text.out;
  // The same model with its first two layers dense lists that layer too, its MLP at the model's ffn.
  const Listing dense_first = list(scenario + " --set workload.model.moe.first_dense=2");
  EXPECT_TRUE(dense_first.pieces.count("layer"));
  EXPECT_TRUE(dense_first.kernels.count({"layer", "ffn_gate_up_gemm"}));
  EXPECT_DOUBLE_EQ(dense_first.flops("layer", "ffn_gate_up_gemm") / l.flops("experts", "ffn_gate_up_gemm"),
                   1.0 / 2); // the expert's rows are top_k = 2 times the layer's tokens, at the same widths
}

TEST(KernelsCommand, AScenarioThatIsNotTransformerTrainingExitsTwo)
{
  const auto r = run_clustersim("kernels " + std::string(CS_SOURCE_DIR) + "/scenarios/spark-hibench.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("kernels needs a transformer-training scenario"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}
