// Selective recomputation by module (workload.model.recompute_modules, Megatron-Core's --recompute-modules).
#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/memory_footprint.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/test_models.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>
#include <regex>

namespace {

using cs::testing::device;
using cs::testing::profile;
using cs::testing::src;

cs::ModelParams llama(const std::string& recompute, std::vector<std::string> modules)
{
  cs::ModelParams m = cs::testing::llama_block(32, 4096, 14336, 32, 8192, 128256, recompute.c_str());
  m.recompute_modules = std::move(modules);
  return m;
}

struct Outcome {
  double activations, backward;
};

Outcome outcome(const cs::ModelParams& m)
{
  cs::MemoryLayout layout;
  layout.parallel.tp = 2;
  layout.parallel.sequence_parallel = true;
  cs::LayerShape shape;
  shape.parallel = layout.parallel;
  const auto cost = cs::make_cost_model(device("h100-sxm5"), profile("h100-sxm5"));
  const cs::PieceTimes t = cs::piece_times(cs::layer_kernels(m, shape), *cost, shape.framework, 0, m.recompute,
                                           shape.parallel.tp, m.recompute_modules);
  return {cs::transformer_memory(m, 1, layout).activations, t.backward};
}

} // namespace

TEST(RecomputeModules, EachModuleTradesItsActivationsForItsForwardAgain)
{
  const Outcome none = outcome(llama("none", {})), attn = outcome(llama("selective", {}));
  const Outcome mlp = outcome(llama("selective", {"mlp"})), norm = outcome(llama("selective", {"layernorm"}));
  const Outcome both = outcome(llama("selective", {"layernorm", "mlp"})), full = outcome(llama("full", {}));
  // Fused attention keeps no scores: Megatron's default module (core_attn) changes nothing here.
  EXPECT_DOUBLE_EQ(attn.activations, none.activations);
  EXPECT_DOUBLE_EQ(attn.backward, none.backward);
  // The MLP's inner activations are most of a SwiGLU layer's; dropping them costs the MLP's forward again.
  EXPECT_LT(mlp.activations, 0.7 * none.activations);
  EXPECT_GT(mlp.backward, none.backward);
  EXPECT_LT(norm.activations, none.activations);
  EXPECT_GT(norm.backward, none.backward);
  EXPECT_LT(norm.backward - none.backward, mlp.backward - none.backward); // norms are cheap to rerun
  EXPECT_LT(both.activations, mlp.activations);
  EXPECT_GT(both.activations, full.activations); // full keeps only each layer's input
  EXPECT_LT(both.backward, full.backward);
  // Hardware FLOPs count the MLP's forward again; model FLOPs do not change.
  EXPECT_GT(cs::hardware_model_flops(llama("selective", {"mlp"}), 8), cs::hardware_model_flops(llama("none", {}), 8));
  EXPECT_EQ(cs::megatron_model_flops(llama("selective", {"mlp"}), 8), cs::megatron_model_flops(llama("none", {}), 8));
}

TEST(RecomputeModules, TheMlpModuleRerunsASquaredReluMlpWhole)
{
  // Nemotron-4's MLP: recomputing the mlp module costs its up projection, its squared ReLU and its down projection
  // again in backward, no more and no less.
  cs::ModelParams m = cs::model_presets().at("nemotron4-15b"), none = m;
  m.recompute = cs::Recompute::SELECTIVE;
  m.recompute_modules = {"mlp"};
  none.recompute = cs::Recompute::NONE;
  const cs::LayerShape shape;
  const auto cost = cs::make_cost_model(device("h100-sxm5"), profile("h100-sxm5"));
  const auto kernels = cs::layer_kernels(m, shape);
  auto backward = [&](const cs::ModelParams& model) {
    return cs::piece_times(kernels, *cost, shape.framework, 0, model.recompute, 1, model.recompute_modules).backward;
  };
  std::vector<cs::NamedKernel> mlp;
  for (const auto& k : kernels.forward)
    if (k.name.rfind("ffn_", 0) == 0 || k.name == "squared_relu")
      mlp.push_back(k);
  ASSERT_EQ(mlp.size(), 3u);
  EXPECT_NEAR(backward(m) - backward(none), cs::pass_cost(*cost, mlp, shape.framework.kernel_gap_s).seconds, 1e-12);
}

TEST(RecomputeModules, ScenariosNameModulesMegatronCoreKnows)
{
  const std::string q = "validate " + src("scenarios/reference/nemo-llama3-8b-cp2-fp8.yaml") + " ";
  auto ok = cs::testing::run_clustersim(
      q + "--set workload.model.recompute=selective --set 'workload.model.recompute_modules=[layernorm, mlp]'");
  EXPECT_EQ(ok.code, 0) << ok.err;
  struct Case {
    std::string sets, words;
  } cases[] = {{"--set 'workload.model.recompute_modules=[mlp]'", "needs recompute: selective"},
               {"--set workload.model.recompute=selective --set 'workload.model.recompute_modules=[mpl]'",
                "unknown recompute module 'mpl'"},
               {"--set workload.model.recompute=selective --set 'workload.model.recompute_modules=[moe_act]'",
                "needs an MoE model"},
               {"--set workload.model.recompute=selective --set 'workload.model.recompute_modules=[moe]'",
                "recompute module 'moe' needs an MoE model"}};
  for (const Case& c : cases) {
    auto r = cs::testing::run_clustersim(q + c.sets);
    EXPECT_EQ(r.code, 2) << c.sets;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.sets << "\n" << r.err;
  }
}

namespace {

struct BlockRun {
  double iteration_s, peak_bytes, hardware_tflops;
};

BlockRun run_recompute(const std::string& sets)
{
  static int n = 0;
  const auto file = cs::testing::write_temp(
      "rc.yaml", "name: rc\nbackend: analytical\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\nworkload:\n"
                 "  kind: transformer-training\n  model: {preset: llama3-8b, recompute: full}\n"
                 "  batch: {global: 32, micro: 1}\n  parallel: {tp: 2, pp: 4}\npolicies: {pipeline: 1f1b}\n");
  const auto out = cs::testing::fresh_dir("rc_out_" + std::to_string(n++));
  const auto r = cs::testing::clustersim("run " + file.string() + " " + sets + " --out " + out.string() + " --quiet");
  EXPECT_EQ(r.code, 0) << r.err;
  const auto m = cs::testing::read_json(out / "report.json").at("metrics");
  return {m.at("iteration_time_s").get<double>(), m.at("peak_memory_bytes").get<double>(),
          m.at("hardware_tflops_per_gpu").get<double>()};
}

} // namespace

TEST(RecomputeLayers, BlockRecomputesTheFirstLayersOfEachStageOnly)
{
  const BlockRun none = run_recompute("--set workload.model.recompute=none"), full = run_recompute("");
  const std::string block = "--set workload.model.recompute_method=block --set workload.model.recompute_num_layers=";
  const BlockRun two = run_recompute(block + "2"), all = run_recompute(block + "8");
  // 8 layers a stage: recomputing 2 of them costs a quarter of full recomputation's extra time and keeps three
  // quarters of what no recomputation keeps beyond full's inputs.
  EXPECT_NEAR((two.iteration_s - none.iteration_s) / (full.iteration_s - none.iteration_s), 0.25, 0.03);
  EXPECT_NEAR((two.peak_bytes - full.peak_bytes) / (none.peak_bytes - full.peak_bytes), 0.75, 0.03);
  EXPECT_GT(two.hardware_tflops, none.hardware_tflops);
  EXPECT_LT(two.hardware_tflops, full.hardware_tflops);
  // Every layer of a stage in the block is full recomputation.
  EXPECT_DOUBLE_EQ(all.iteration_s, full.iteration_s);
  EXPECT_DOUBLE_EQ(all.peak_bytes, full.peak_bytes);
}

TEST(RecomputeLayers, UniformGroupsKeepFullTimeAndTradeInputsForTheTransientGroup)
{
  const BlockRun full = run_recompute(""), four = run_recompute("--set workload.model.recompute_num_layers=4");
  EXPECT_DOUBLE_EQ(four.iteration_s, full.iteration_s);
  EXPECT_GT(four.peak_bytes, full.peak_bytes); // three more layers whole beat the six inputs a stage it saves
}

TEST(RecomputeLayers, QualifiersNeedFullRecomputationAndBlockNeedsACount)
{
  const std::string base = "name: t\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\nworkload:\n  kind: "
                           "transformer-training\n  batch: {global: 8, micro: 1}\n  model:\n    preset: llama3-8b\n";
  auto error = [](const std::string& text) {
    const auto file = cs::testing::write_temp("rcbad.yaml", text);
    return cs::testing::clustersim("validate " + file.string());
  };
  for (const auto& [text, where] : std::vector<std::pair<std::string, std::string>>{
           {"    recompute: selective\n    recompute_num_layers: 2\n", ":9:27: recompute_method and"},
           {"    recompute: full\n    recompute_method: block\n", ":9:23: recompute_method: block needs"},
           {"    recompute: full\n    recompute_num_layers: 33\n",
            ":9:27: 'workload.model.recompute_num_layers' must be at most 32"},
           {"    recompute: full\n    recompute_num_layers: -1\n", ":9:27:"},
           {"MOE    recompute: full\n    recompute_method: block\n    recompute_num_layers: 1\n",
            "block recomputation of MoE layers"}}) {
    const bool moe = text.rfind("MOE", 0) == 0;
    std::string scenario = base + (moe ? text.substr(3) : text);
    if (moe)
      scenario.replace(scenario.find("llama3-8b"), 9, "mixtral-8x7b");
    const auto r = error(scenario);
    EXPECT_EQ(r.code, 2) << text;
    EXPECT_NE(r.err.find(where), std::string::npos) << text << r.err;
  }
}

TEST(RecomputeModules, MoeActAndSharedExpertsTradeTheirActivationsForTheirForwardAgain)
{
  // DeepSeek-V2-Lite cut to 8 layers over 2 stages and EP 4: 64 experts of 1,408 top-6 and 2 shared experts.
  auto run = [](const std::string& modules) {
    static int n = 0;
    const auto file = cs::testing::write_temp(
        "moe_rc.yaml", "name: moe_rc\nbackend: analytical\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\n"
                       "workload:\n  kind: transformer-training\n  model: {preset: deepseek-v2-lite, layers: 8, "
                       "seq: 2048, recompute: selective, recompute_modules: " +
                           modules + "}\n  batch: {global: 16, micro: 1}\n  parallel: {pp: 2, ep: 4, dp: 4}\n");
    const auto out = cs::testing::fresh_dir("moe_rc_" + std::to_string(n++));
    const auto r = cs::testing::clustersim("run " + file.string() + " --out " + out.string() + " --quiet");
    EXPECT_EQ(r.code, 0) << r.err;
    const auto m = cs::testing::read_json(out / "report.json").at("metrics");
    return std::make_pair(m.at("iteration_time_s").get<double>(), m.at("peak_memory_bytes").get<double>());
  };
  const auto base = run("[core_attn]"), act = run("[moe_act]"), shared = run("[shared_experts]");
  const auto both = run("[moe_act, shared_experts]");
  EXPECT_GT(act.first, base.first);
  EXPECT_LT(act.second, base.second);
  EXPECT_GT(shared.first, act.first); // two shared MLPs' GEMMs cost more to rerun than the experts' activation
  EXPECT_LT(shared.second, base.second);
  // The two free different activations and cost different kernels: together they add up.
  EXPECT_NEAR(base.second - both.second, (base.second - act.second) + (base.second - shared.second), 1e3);
  EXPECT_NEAR(both.first - base.first, (act.first - base.first) + (shared.first - base.first),
              0.02 * (both.first - base.first));
}

TEST(RecomputeModules, MoeModulesNeedAnMoeModel)
{
  const auto file = cs::testing::write_temp(
      "moe_rc_bad.yaml", "name: t\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\nworkload:\n  kind: "
                         "transformer-training\n  batch: {global: 8, micro: 1}\n  model: {preset: llama3-8b, "
                         "recompute: selective, recompute_modules: [moe_act]}\n");
  const auto r = cs::testing::clustersim("validate " + file.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("recompute module 'moe_act' needs an MoE model"), std::string::npos) << r.err;
  const auto moe = cs::testing::write_temp(
      "moe_rc_moe.yaml", "name: t\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\nworkload:\n  kind: "
                         "transformer-training\n  batch: {global: 8, micro: 1}\n  model: {preset: mixtral-8x7b, "
                         "recompute: selective, recompute_modules: [moe]}\n");
  const auto m = cs::testing::clustersim("validate " + moe.string());
  EXPECT_EQ(m.code, 0) << m.err;
}

TEST(RecomputeModules, TheMoeModuleRerunsTheWholeLayerAndItsAllToAlls)
{
  // Mixtral 8x7B as Megatron-Core ran it: with `moe` the MoE layer keeps only its input, and its backward first runs
  // its forward again, the dispatch and combine included (2 more all-to-alls to the 4 a layer and microbatch).
  auto run = [](const std::string& modules) {
    static int n = 0;
    const auto out = cs::testing::fresh_dir("moe_module_" + std::to_string(n++));
    const auto r = cs::testing::clustersim("run " + src("scenarios/reference/mcore-mixtral-8x7b.yaml") +
                                           " --set workload.model.recompute=selective --set "
                                           "'workload.model.recompute_modules=" +
                                           modules + "' --quiet --out " + out.string());
    EXPECT_EQ(r.code, 0) << r.err;
    return cs::testing::read_json(out / "report.json").at("metrics");
  };
  const auto act = run("[moe_act]"), whole = run("[moe]"), none = run("[core_attn]");
  EXPECT_GT(whole.at("iteration_time_s").get<double>(), act.at("iteration_time_s").get<double>());
  EXPECT_LT(whole.at("peak_memory_bytes").get<double>(), act.at("peak_memory_bytes").get<double>());
  // The all-to-alls run again and move more; moe_act's rerun moves nothing.
  const double moved = whole.at("network_bytes").get<double>() - none.at("network_bytes").get<double>();
  EXPECT_GT(moved, 0.2 * none.at("network_bytes").get<double>());
  EXPECT_GT(whole.at("alltoall_time_s").get<double>(), 1.1 * act.at("alltoall_time_s").get<double>());
  EXPECT_NEAR(act.at("network_bytes").get<double>(), none.at("network_bytes").get<double>(), 1.0);
  // Hardware FLOPs count the rerun: the router and each token's top-2 experts once more in every layer.
  EXPECT_GT(whole.at("hardware_tflops_per_gpu").get<double>() * whole.at("iteration_time_s").get<double>(),
            none.at("hardware_tflops_per_gpu").get<double>() * none.at("iteration_time_s").get<double>() * 1.1);
}

TEST(RecomputeModules, TorchtitansOpLevelPolicyRerunsEverySecondMatmul)
{
  // torchtitan's op-level selective checkpointing on a Llama 3 8B block: of q, k, v, o, w1, w3, w2 it reruns k, o and
  // w3, and every op that is no matmul but attention; it keeps the block's input, q, v, attention's output, w1's and
  // w2's outputs.
  const cs::ModelParams op = llama("selective", {"op_sac"}), none = llama("none", {});
  const Outcome sac = outcome(op), kept = outcome(none), mlp = outcome(llama("selective", {"mlp"}));
  EXPECT_GT(sac.backward, kept.backward);
  EXPECT_LT(sac.backward, outcome(llama("full", {})).backward);
  // Rerun matmul FLOPs a token: 2 h (kv + o + ffn), between none and the whole MLP's 2 h (3 ffn) plus more.
  const double again = cs::hardware_model_flops(op, 8) - cs::hardware_model_flops(none, 8);
  EXPECT_DOUBLE_EQ(again, 8.0 * 8192 * 32 * 2.0 * 4096 * (1024 + 4096 + 14336));
  // tp 2 with sequence parallelism: the block's input and w2's output split over the TP ranks, the rest too; the
  // loss's fp32 log-probabilities beside them.
  const double blocks = 8192.0 * 4096 * 32 * (4.0 + 2.0 * (4096 + 1024 + 4096 + 14336) / 4096) / 2;
  EXPECT_NEAR(sac.activations, blocks + 8192.0 * 128256 / 2 * 4, 1.0);
  EXPECT_LT(sac.activations, 0.5 * kept.activations);
  EXPECT_GT(sac.activations, mlp.activations); // selective mlp keeps only the MLP's input of its 3 ffn units
  // A policy of its own: not with other modules, MoE layers or MLA.
  const std::string q = "validate " + src("scenarios/reference/torchtitan-llama3-8b-fsdp.yaml") + " ";
  auto r = cs::testing::run_clustersim(q + "--set 'workload.model.recompute_modules=[op_sac, layernorm]'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("recompute module 'op_sac'"), std::string::npos) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(":[0-9]+:[0-9]+: "))) << r.err;
  r = cs::testing::run_clustersim("validate " + src("scenarios/moe-mixtral.yaml") +
                                  " --set workload.model.recompute=selective"
                                  " --set 'workload.model.recompute_modules=[op_sac]'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("without MoE layers"), std::string::npos) << r.err;
}
