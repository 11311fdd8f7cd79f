// Whether a run fits its GPU: the report's terms add up to the peak, the limit is the GPU less memory_reserve, one
// byte past it is refused, and DeepSeek-V3's recipe fits 80 GB as it trained (validation.md §6, the frontier issues).
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

namespace {
struct FitRun {
  nlohmann::json report;
  std::string summary;
};

FitRun run_fit(const std::string& name, const std::string& scenario, const std::string& extra)
{
  const auto dir = cs::testing::fresh_dir(name);
  const auto r = cs::testing::clustersim("run " + cs::testing::src(scenario) + " --backend analytical " + extra +
                                         " --out " + dir.string());
  EXPECT_EQ(r.code, 0) << r.err;
  return {cs::testing::read_json(dir / "report.json"), r.out};
}
} // namespace

TEST(MemoryFit, TheTermsAddUpAndOneBytePastTheLimitIsRefused)
{
  const auto base = run_fit("fit_base", "scenarios/quickstart.yaml", "--set workload.iterations=1");
  const auto& B = base.report["breakdown"];
  const double peak = base.report["metrics"]["peak_memory_bytes"].get<double>();
  const double terms = B["memory_parameters_bytes"].get<double>() + B["memory_gradients_bytes"].get<double>() +
                       B["memory_optimizer_bytes"].get<double>() + B["memory_activations_bytes"].get<double>() +
                       B["memory_buffers_bytes"].get<double>();
  EXPECT_NEAR(terms, peak, 1e-9 * peak);
  EXPECT_EQ(B["memory_in_flight_microbatches"].get<double>(), 1); // pure data parallelism holds one microbatch
  // The usable memory is the GPU's less memory_reserve: a reserve that leaves the peak just inside fits, one that
  // leaves it just outside does not, and the summary says so.
  const double capacity = base.report["metrics"]["memory_capacity_bytes"].get<double>();
  EXPECT_DOUBLE_EQ(B["memory_reserve_bytes"].get<double>(), 0.05 * capacity); // the default memory_reserve
  const double inside = 1 - peak * 1.0001 / capacity, outside = 1 - peak * 0.9999 / capacity;
  const auto fits = run_fit("fit_inside", "scenarios/quickstart.yaml",
                            "--set workload.iterations=1 --set workload.memory_reserve=" + std::to_string(inside));
  const auto over = run_fit("fit_outside", "scenarios/quickstart.yaml",
                            "--set workload.iterations=1 --set workload.memory_reserve=" + std::to_string(outside));
  EXPECT_TRUE(fits.report["metrics"]["fits_in_memory"].get<bool>());
  EXPECT_EQ(fits.summary.find("DOES NOT FIT"), std::string::npos) << fits.summary;
  EXPECT_FALSE(over.report["metrics"]["fits_in_memory"].get<bool>());
  EXPECT_NE(over.summary.find("DOES NOT FIT"), std::string::npos) << over.summary;
}

TEST(MemoryFit, DeepSeekV3RecipeFitsEightyGigabytes)
{
  // 2,048 H800 under DualPipe: two copies of the weights, 17 chunk-microbatches held (PP + 1, 8.5 microbatches of the
  // device's eight layers), FP8 copies of the routed tokens, RMSNorm, MLA up-projections and the experts' SwiGLU
  // recomputed, AdamW's moments in BF16 (the report's section 3.3.2), and DeepEP's queues for EP 64 beside the 25 MiB
  // gradient bucket: 67.4 GiB of the 75.7 an H800 (81,559 MiB) leaves a run.
  const auto recipe = run_fit("fit_dsv3", "bench/scenarios/deepseek-v3-2048-h800.yaml", "");
  EXPECT_TRUE(recipe.report["metrics"]["fits_in_memory"].get<bool>());
  EXPECT_EQ(recipe.report["breakdown"]["memory_in_flight_microbatches"].get<double>(), 8.5);
  EXPECT_DOUBLE_EQ(recipe.report["breakdown"]["memory_buffers_bytes"].get<double>(), 25.0 * 1048576 + 714773760.0);
  const double gib = recipe.report["metrics"]["peak_memory_bytes"].get<double>() / (1024.0 * 1024 * 1024);
  EXPECT_GT(gib, 50);
  EXPECT_LT(gib, 75.7);
}
