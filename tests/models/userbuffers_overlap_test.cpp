// Transformer Engine's userbuffers under tp_comm_overlap (workload.framework.tp_overlap): the SMs each overlap's
// communication kernels take from the GEMM beside it.
#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_models.hpp"
#include "tests/test_support.hpp"
#include "workloads/training/training_workload.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace {

using cs::testing::device;
using cs::testing::profile;

// Llama 2 70B's layer on TP 4 with sequence parallelism, one microbatch of 4,096 tokens.
cs::ModelParams llama70b() { return cs::testing::llama_block(80, 8192, 28672, 64, 4096, 32000); }

cs::LayerShape tp4(const cs::FrameworkProfile& fw)
{
  cs::LayerShape shape;
  shape.parallel.tp = 4;
  shape.parallel.sequence_parallel = true;
  shape.framework = fw;
  return shape;
}

const cs::GemmKernel& gemm_named(const std::vector<cs::NamedKernel>& kernels, const std::string& name)
{
  for (const auto& k : kernels)
    if (k.name == name)
      return std::get<cs::GemmKernel>(k.kernel);
  throw std::invalid_argument("no kernel " + name);
}

// How much longer `g` runs without `sms` of its SMs.
double without(const cs::KernelCostModel& cost, cs::GemmKernel g, int sms)
{
  const double t = cost.predict(g).total;
  g.sm_margin = sms;
  return cost.predict(g).total - t;
}

} // namespace

TEST(GemmWaves, AnSmMarginRunsTheTilesInWavesOverTheOtherSms)
{
  // A100, one 256 x 128 tile: 108 tiles fill its 108 SMs in one wave; launched without 8, they need two, each as long.
  cs::DeviceProfile p = profile("a100-sxm4-80gb");
  p.gemm_tiles = {cs::GemmTile{256, 128, 1.0, ""}};
  cs::GemmWaveModel m(device("a100-sxm4-80gb"), p);
  cs::GemmKernel g{2304, 1536, 4096, 1, "fp16"};
  const auto all = m.predict(g);
  g.sm_margin = 8;
  const auto fewer = m.predict(g);
  EXPECT_NEAR(fewer.compute / all.compute, 2.0, 1e-12);
  EXPECT_EQ(fewer.detail, "tile 256x128, 108 tiles, 2 waves");
  // Many waves: the time goes as the SMs left, 132 / 108 on H100 without 24.
  cs::GemmWaveModel h100(device("h100-sxm5"), profile("h100-sxm5"));
  cs::GemmKernel big{65536, 65536, 8192, 1, "bf16"};
  const double t = h100.predict(big).compute;
  big.sm_margin = 24;
  EXPECT_NEAR(h100.predict(big).compute / t, 132.0 / 108.0, 0.01);
}

TEST(GemmWaves, WithoutTilesTheRooflineRunsAtTheSmsLeft)
{
  // A profile with no tile list prices GEMMs by the roofline: launched without 24 of 132 SMs, at 108/132 of the peak.
  cs::DeviceProfile p = profile("h100-sxm5");
  p.gemm_tiles.clear();
  cs::GemmWaveModel m(device("h100-sxm5"), p);
  cs::GemmKernel g{16384, 16384, 16384, 1, "bf16"};
  const auto all = m.predict(g);
  ASSERT_EQ(all.model, "roofline");
  g.sm_margin = 24;
  EXPECT_NEAR(m.predict(g).compute / all.compute, 132.0 / 108.0, 1e-12);
}

TEST(GemmWaves, AMeasuredGemmSlowsAsTheWaveModelSaysWithoutSomeSms)
{
  // A measured table answers this shape; the margin scales the measured time by the waves' ratio.
  cs::DeviceProfile p = profile("h100-sxm5");
  cs::ProfileTable t{"gemm", "bf16", {}, {}};
  for (double m : {4096, 8192})
    for (double n : {4096, 8192})
      for (double k : {4096, 8192}) {
        t.shapes.push_back({m, n, k});
        t.seconds.push_back(2 * m * n * k / 650e12);
      }
  p.tables = {t};
  const auto model = cs::make_cost_model(device("h100-sxm5"), p);
  cs::GemmWaveModel waves(device("h100-sxm5"), p);
  cs::GemmKernel g{8192, 8192, 8192, 1, "bf16"};
  ASSERT_EQ(model->predict(g).model, "profiled");
  const double measured = model->predict(g).total, analytic = waves.predict(g).total;
  g.sm_margin = 16;
  EXPECT_NEAR(model->predict(g).total / measured, waves.predict(g).total / analytic, 1e-9);
  EXPECT_GT(model->predict(g).total, measured * 1.05);
}

TEST(Userbuffers, TransformerEngineDefaultsInMegatronCoreAndNoneElsewhere)
{
  const auto core = cs::testing::framework("megatron-core");
  ASSERT_EQ(core.tp_overlap.size(), cs::ub_layer_names().size());
  EXPECT_EQ(core.tp_overlap.at("proj_fprop").method, "pipeline");
  EXPECT_EQ(core.tp_overlap.at("proj_fprop").num_sm, 16);
  EXPECT_TRUE(core.tp_overlap.at("proj_fprop").set_sm_margin);
  EXPECT_EQ(core.tp_overlap.at("qkv_wgrad").method, "bulk");
  EXPECT_EQ(core.tp_overlap.at("fc1_fprop").method, "ring_exchange");
  EXPECT_FALSE(core.tp_overlap.at("fc1_fprop").set_sm_margin);
  EXPECT_TRUE(cs::testing::framework("fsdp").tp_overlap.empty());
  EXPECT_TRUE(cs::testing::framework("megatron").tp_overlap.empty());
}

TEST(Userbuffers, ANamedConfigurationAloneOrChangedByTheLayersGivenBesideIt)
{
  auto overlap = [](const std::string& value) {
    const cs::Scenario s = cs::load_scenario(cs::testing::src("scenarios/reference/nemo-llama2-70b-fp8.yaml"),
                                             {"workload.framework.tp_overlap=" + value});
    return cs::workload_as<cs::TrainingWorkload>(s).params.framework.tp_overlap;
  };
  const auto named = overlap("ub_cfg_h100_h8192_tp4_mbs1_seqlen4096");
  EXPECT_EQ(named.at("proj_fprop").num_sm, 24);
  EXPECT_EQ(named.at("fc2_fprop").num_sm, 16);
  EXPECT_EQ(named.at("qkv_dgrad").num_sm, 8);
  // Transformer Engine's own defaults by name: TE 2.x's are the megatron-core profile's, TE 1.x's have no margin.
  EXPECT_EQ(overlap("transformer_engine_2_defaults").size(), cs::ub_layer_names().size());
  for (const auto& [layer, o] : overlap("transformer_engine_2_defaults")) {
    EXPECT_EQ(o.method, cs::te_default_overlap(layer).method) << layer;
    EXPECT_EQ(o.set_sm_margin, cs::te_default_overlap(layer).set_sm_margin) << layer;
  }
  const auto te1 = overlap("transformer_engine_1_defaults");
  EXPECT_EQ(te1.at("proj_fprop").num_sm, 16);
  EXPECT_FALSE(te1.at("proj_fprop").set_sm_margin);
  EXPECT_EQ(te1.at("qkv_fprop").method, "ring_exchange");
  const auto changed = overlap("{config: ub_cfg_h100_h8192_tp4_mbs1_seqlen4096, proj_fprop: {num_sm: 8}}");
  EXPECT_EQ(changed.at("proj_fprop").num_sm, 8);
  EXPECT_TRUE(changed.at("proj_fprop").set_sm_margin); // the rest of its entry is the configuration's
  EXPECT_EQ(changed.at("fc2_fprop").num_sm, 16);
  EXPECT_EQ(changed.at("qkv_dgrad").num_sm, 8);
}

TEST(Userbuffers, TheSummarySaysTheTensorParallelFigureHoldsTheOverlapsSms)
{
  const auto dir = cs::testing::fresh_dir("ub_summary");
  const auto r = cs::testing::run_clustersim("run " + cs::testing::src("scenarios/reference/nemo-llama2-70b-fp8.yaml") +
                                             " --set workload.iterations=1 --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(exposed, and what the overlaps' SMs cost the GEMMs; the rest overlapped)"), std::string::npos)
      << r.out;
  fs::remove_all(dir);
}

TEST(Userbuffers, EachOverlapCostsItsGemmWhatItsSmsDo)
{
  const auto cost = cs::make_cost_model(device("h100-sxm5"), profile("h100-sxm5"));
  const cs::ModelParams m = llama70b();
  cs::FrameworkProfile fw = cs::testing::framework("megatron-core");
  fw.tp_comm_overlap = true;
  for (const auto& layer : cs::ub_layer_names()) // every overlap on the copy engines: no SM taken
    fw.tp_overlap[layer] = cs::UbOverlap{"ring_exchange", 1, false};
  const cs::PassKernels k = cs::layer_kernels(m, tp4(fw));
  const double collective = 200e-6;
  const cs::PieceTimes free = cs::piece_times(k, *cost, fw, collective, m.recompute, 4);

  // NeMo's Llama 2 70B configuration: the output projections' reduce-scatters pipelined on 24 and 16 SMs the GEMMs
  // are launched without, the backward's bulk collectives on 8, 16, 2 and 4 SMs the GEMMs lose while they run.
  cs::FrameworkProfile nemo = fw;
  nemo.tp_overlap["proj_fprop"] = {"pipeline", 24, true};
  nemo.tp_overlap["fc2_fprop"] = {"pipeline", 16, true};
  nemo.tp_overlap["qkv_dgrad"] = {"bulk", 8, false};
  nemo.tp_overlap["qkv_wgrad"] = {"bulk", 16, false};
  nemo.tp_overlap["fc1_dgrad"] = {"bulk", 2, false};
  nemo.tp_overlap["fc1_wgrad"] = {"bulk", 4, false};
  const cs::PieceTimes t = cs::piece_times(k, *cost, nemo, collective, m.recompute, 4);
  const double forward = without(*cost, gemm_named(k.forward, "attn_out_gemm"), 24) +
                         without(*cost, gemm_named(k.forward, "ffn_down_gemm"), 16);
  EXPECT_GT(forward, 0);
  EXPECT_NEAR(t.forward - free.forward, forward, 1e-12);
  double backward = 0;
  for (const auto& [name, sms] : std::vector<std::pair<std::string, int>>{{"qkv_gemm_dgrad", 8},
                                                                          {"qkv_gemm_wgrad", 16},
                                                                          {"ffn_gate_up_gemm_dgrad", 2},
                                                                          {"ffn_gate_up_gemm_wgrad", 4}}) {
    const cs::GemmKernel& g = gemm_named(k.backward, name);
    backward += without(*cost, g, sms) * std::min(1.0, collective / cost->predict(g).total);
  }
  EXPECT_GT(backward, 0);
  EXPECT_NEAR(t.backward - free.backward, backward, 1e-12);

  // Without tensor-parallel collectives, or with the overlap off, the overlaps take nothing.
  EXPECT_NEAR(cs::piece_times(k, *cost, nemo, collective, m.recompute, 1).forward,
              cs::piece_times(k, *cost, fw, collective, m.recompute, 1).forward, 1e-15);
  nemo.tp_comm_overlap = false;
  fw.tp_comm_overlap = false;
  EXPECT_NEAR(cs::piece_times(k, *cost, nemo, collective, m.recompute, 4).forward,
              cs::piece_times(k, *cost, fw, collective, m.recompute, 4).forward, 1e-15);
}

TEST(Userbuffers, AnOverlapThatLeavesNoSmsOrIsMisspeltIsRefusedAtItsKey)
{
  const fs::path dir = fs::temp_directory_path() / ("cs_ub_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ifstream in(cs::testing::src("scenarios/reference/nemo-llama2-70b-fp8.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "tp_overlap: ub_cfg_h100_h8192_tp4_mbs1_seqlen4096",
                    to = "tp_overlap: {proj_fprop: {method: pipeline, num_sm: 132, set_sm_margin: true}}";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), to);
  const fs::path bad = dir / "bad.yaml";
  std::ofstream(bad) << text;
  const std::vector<std::pair<std::string, std::string>> cases{
      {bad.string(), "proj_fprop's num_sm = 132 leaves its GEMM none of h100-sxm5's 132 SMs"},
      {cs::testing::src("scenarios/reference/nemo-llama3-8b-cp2-fp8.yaml") +
           " --set workload.framework.tp_overlap.proj_frop.num_sm=3",
       "did you mean 'proj_fprop'?"},
      {cs::testing::src("scenarios/reference/nemo-llama3-8b-cp2-fp8.yaml") +
           " --set workload.framework.tp_overlap.fc2_fprop.method=ring",
       "expected one of ring_exchange | pipeline | bulk"},
      {cs::testing::src("scenarios/reference/nemo-llama3-8b-cp2-fp8.yaml") +
           " --set workload.framework.tp_overlap.qkv_dgrad.num_sm=-1",
       "must not be negative"},
      {cs::testing::src("scenarios/reference/nemo-llama2-70b-fp8.yaml") +
           " --set workload.framework.tp_overlap=ub_cfg_h100_h8192_tp4_mbs1_seqlen409",
       "did you mean 'ub_cfg_h100_h8192_tp4_mbs1_seqlen4096'?"},
  };
  for (const auto& [args, words] : cases) {
    const fs::path out = dir / "out";
    const auto r = cs::testing::run_clustersim("run " + args + " --quiet --out " + out.string());
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
  const auto r = cs::testing::run_clustersim("run " + bad.string() + " --quiet --out " + (dir / "out").string());
  EXPECT_NE(r.err.find(bad.string() + ":"), std::string::npos) << r.err; // the file's line and column
  fs::remove_all(dir);
}
