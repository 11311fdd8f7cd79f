// Multi-token prediction (workload.model.mtp_depth): its parameters, FLOPs, time and memory on the last stage.
#include "models/transformer/model_params.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

namespace {

struct MtpRun {
  double iteration_s, peak_bytes, parameters;
};

MtpRun run_mtp(int depth, const std::string& extra = "")
{
  const std::string text = "name: mtp\nbackend: analytical\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\n"
                           "workload:\n  kind: transformer-training\n  framework: megatron-core\n"
                           "  model: {preset: deepseek-v2-lite, layers: 8, seq: 2048, mtp_depth: " +
                           std::to_string(depth) + extra +
                           "}\n  batch: {global: 16, micro: 1}\n  parallel: {pp: 2, ep: 4, dp: 4}\n  iterations: 1\n";
  const auto file = cs::testing::write_temp("mtp_" + std::to_string(depth) + ".yaml", text);
  const auto out = cs::testing::fresh_dir("mtp_out_" + std::to_string(depth));
  const auto r = cs::testing::clustersim("run " + file.string() + " --out " + out.string() + " --quiet");
  EXPECT_EQ(r.code, 0) << (r.out + r.err);
  const auto report = cs::testing::read_json(out / "report.json");
  const auto& m = report.at("metrics");
  return {m.at("iteration_time_s").get<double>(), m.at("peak_memory_bytes").get<double>(),
          m.at("parameter_count").get<double>()};
}

} // namespace

TEST(MultiTokenPrediction, DeepSeekV3ModuleIsAnMoeLayerAProjectionAndNorms)
{
  cs::ModelParams v3 = cs::model_presets().at("deepseek-v3");
  const double without = cs::total_parameters(v3);
  v3.mtp_depth = 1;
  // Its layer is like the last (an MoE layer of 11.5B), plus the 2 h x h projection and three norms: 11.6B of its own.
  // DeepSeek's report gives the module as 14B: its checkpoint stores copies of the embedding and the output layer
  // (0.93B each), which training shares with the main model.
  const double h = 7168;
  EXPECT_DOUBLE_EQ(cs::mtp_parameters(v3), cs::layer_parameters_at(v3, 60) + 2 * h * h + 3 * h);
  EXPECT_DOUBLE_EQ(cs::total_parameters(v3) - without, cs::mtp_parameters(v3));
  const double stored = cs::mtp_parameters(v3) + 2.0 * 129280 * h;
  EXPECT_NEAR(stored / 14e9, 1.0, 0.05) << stored;
  // Model FLOPs: each module's layer and projection (6 per weight a token), attention core and logits, as Megatron.
  cs::ModelParams none = v3;
  none.mtp_depth = 0;
  const double tokens = 4096.0 * 8;
  const double weights = cs::active_gemm_weights_at(v3, 60) + 2 * h * h;
  const double core = 3.0 * 2.0 * 4096 * 128 * (192 + 128);
  EXPECT_NEAR(cs::megatron_model_flops(v3, 8) - cs::megatron_model_flops(none, 8),
              tokens * (6 * weights + core + 4.5 * 129280 * h), 1e6);
}

TEST(MultiTokenPrediction, EachModuleLengthensTheLastStageAndItsMemory)
{
  const MtpRun zero = run_mtp(0), one = run_mtp(1), two = run_mtp(2);
  // The last of two stages holds 4 layers and the output layer; each module adds a layer, a loss and a projection,
  // and the pipeline waits on that stage: the step grows by the same amount each time.
  EXPECT_GT(one.iteration_s, zero.iteration_s * 1.1);
  EXPECT_NEAR(two.iteration_s - one.iteration_s, one.iteration_s - zero.iteration_s,
              0.02 * (one.iteration_s - zero.iteration_s));
  EXPECT_GT(one.peak_bytes, zero.peak_bytes);
  EXPECT_NEAR(two.peak_bytes - one.peak_bytes, one.peak_bytes - zero.peak_bytes, 1e6);
  const cs::ModelParams lite = cs::model_presets().at("deepseek-v2-lite");
  cs::ModelParams eight = lite;
  eight.layers = 8;
  eight.seq = 2048;
  eight.mtp_depth = 1;
  EXPECT_DOUBLE_EQ(one.parameters - zero.parameters, cs::mtp_parameters(eight));
}

TEST(MultiTokenPrediction, BadDepthsAreRefused)
{
  for (const char* bad : {"-1", "17"}) {
    const std::string text = "name: mtp\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\nworkload:\n  kind: "
                             "transformer-training\n  model: {preset: deepseek-v2-lite, mtp_depth: " +
                             std::string(bad) + "}\n  batch: {global: 8, micro: 1}\n";
    const auto file = cs::testing::write_temp("mtp_bad.yaml", text);
    const auto r = cs::testing::clustersim("validate " + file.string());
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE((r.out + r.err).find(":5:"), std::string::npos) << (r.out + r.err);
    EXPECT_NE((r.out + r.err).find("mtp_depth"), std::string::npos) << (r.out + r.err);
  }
}
