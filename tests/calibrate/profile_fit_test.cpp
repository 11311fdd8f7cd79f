#include "base/input_error.hpp"
#include "calibrate/fit/profile_fit.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

namespace {

using cs::testing::device;

std::vector<cs::Residual> held_out(const cs::FitResult& r, const std::string& family)
{
  std::vector<cs::Residual> out;
  for (const auto& x : r.residuals)
    if (x.held_out && x.family == family)
      out.push_back(x);
  return out;
}

cs::Measurement gemm(double m, double n, double k, const char* dtype, double seconds)
{
  return cs::Measurement{
      "gemm",
      {{"m", std::to_string(int(m))}, {"n", std::to_string(int(n))}, {"k", std::to_string(int(k))}, {"dtype", dtype}},
      seconds,
      5,
      0};
}

} // namespace

TEST(ProfileFit, RecoversAKnownGpuProfileIncludingWaves)
{
  // Synthetic H100 measurements from the shipped profile's own model: the fit must find its parameters.
  const auto& h100 = device("h100-sxm5");
  // (The fit does not fit the size ramp of memory-bound kernels, so the truth has none.)
  cs::DeviceProfile truth = *cs::builtin_profile("h100-sxm5");
  truth.memory_half_bytes = 0;
  auto model = cs::make_cost_model(h100, truth);
  cs::Measurements m;
  m.device = "h100-sxm5";
  for (double mm : {1024, 1792, 1793, 2304, 4096})
    for (double nn : {1024, 1536, 1537, 3072, 3073, 8192})
      for (double kk : {1024, 4096}) {
        cs::GemmKernel g{mm, nn, kk, 1, "bf16"};
        m.items.push_back(gemm(mm, nn, kk, "bf16", model->predict(g).total));
      }
  for (double mib : {64, 128, 256, 512, 1024, 2048}) {
    cs::MemcpyKernel c{mib * 1048576, "d2d"};
    m.items.push_back(cs::Measurement{
        "memcpy", {{"bytes", std::to_string(mib * 1048576)}, {"direction", "d2d"}}, model->predict(c).total, 5, 0});
  }
  cs::FitResult r = cs::fit_profile(m, h100, cs::FitOptions{});
  EXPECT_NEAR(r.profile.launch_overhead, truth.launch_overhead, 1e-9);
  EXPECT_NEAR(r.profile.efficiency("bf16"), truth.efficiency("bf16"), 1e-6);
  EXPECT_NEAR(r.profile.memory_efficiency_for("memcpy/d2d"), truth.memory_efficiency_for("memcpy/d2d"), 1e-6);
  EXPECT_EQ(r.profile.gemm_tiles.size(), truth.gemm_tiles.size());
  EXPECT_EQ(r.profile.gemm_k_overhead, truth.gemm_k_overhead); // the tiles' prologue and epilogue, found by the grid
  ASSERT_GT(truth.gemm_k_overhead, 0);
  EXPECT_EQ(r.profile.ctas_per_sm, 1);
  EXPECT_LT(cs::error_stats(held_out(r, "gemm")).p90, 1e-6);
}

TEST(ProfileFit, CommittedCpuMeasurementsMeetTheHeldOutTarget)
{
  // The measurements committed with the CPU profile: held-out median |error| <= 10% for GEMM and bandwidth.
  auto m = cs::load_measurements(std::string(CS_SOURCE_DIR) + "/calibrate/measurements/cpu-node.json");
  cs::FitResult r = cs::fit_profile(m, device("cpu-node"), cs::FitOptions{});
  for (const char* family : {"gemm", "bandwidth", "memcpy"}) {
    auto stats = cs::error_stats(held_out(r, family));
    EXPECT_GE(stats.count, 3) << family;
    EXPECT_LE(stats.median, 0.10) << family;
  }
  // And the shipped profile is that fit.
  const cs::DeviceProfile* shipped = cs::builtin_profile("cpu-node");
  ASSERT_NE(shipped, nullptr);
  EXPECT_EQ(shipped->origin, "fit");
  EXPECT_DOUBLE_EQ(shipped->efficiency("fp32"), r.profile.efficiency("fp32"));
}

TEST(ProfileFit, TooFewMeasurementsIsAnError)
{
  cs::Measurements m;
  m.device = "h100-sxm5";
  m.items = {gemm(1024, 1024, 1024, "bf16", 1e-3), gemm(2048, 2048, 2048, "bf16", 8e-3)};
  EXPECT_THROW(cs::fit_profile(m, device("h100-sxm5"), cs::FitOptions{}), std::invalid_argument);
}

TEST(ProfileFit, RefusesAnEfficiencyAboveOne)
{
  // bf16 GEMMs "measured" at twice the H100's datasheet peak: no profile can be faster than its device.
  cs::Measurements m;
  m.device = "h100-sxm5";
  for (double n : {1024, 2048, 4096, 8192, 1536, 3072, 6144, 12288})
    m.items.push_back(gemm(n, n, n, "bf16", 2 * n * n * n / (2 * 989.4e12)));
  for (double mib : {64, 256, 1024})
    m.items.push_back(cs::Measurement{
        "memcpy", {{"bytes", std::to_string(mib * 1048576)}, {"direction", "d2d"}}, mib * 1048576 / 2e12, 5, 0});
  try {
    cs::fit_profile(m, device("h100-sxm5"), cs::FitOptions{});
    FAIL() << "the fit accepted an efficiency above 1";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("efficiency"), std::string::npos) << e.what();
  }
}

TEST(ProfileFit, PublicA100SweepFitsWithTheTilePrologue)
{
  // The committed public measurements (Azure's cuBLASLt sweep and BabelStream) refit to the shipped profile's GEMM.
  auto m = cs::load_measurements(std::string(CS_SOURCE_DIR) + "/calibrate/measurements/a100-sxm4-80gb-public.json");
  cs::FitOptions all;
  all.holdout_every = 1000;
  const cs::FitResult r = cs::fit_profile(m, device("a100-sxm4-80gb"), all);
  const cs::DeviceProfile& shipped = *cs::builtin_profile("a100-sxm4-80gb");
  EXPECT_NEAR(r.profile.efficiency("fp16"), shipped.efficiency("fp16"), 1e-9);
  EXPECT_EQ(r.profile.gemm_k_overhead, shipped.gemm_k_overhead);
  EXPECT_LE(cs::error_stats(r.residuals).median, 0.03);
}

TEST(Measurements, MalformedFilesArePositionedErrors)
{
  auto where = [](const std::string& text) {
    try {
      cs::parse_measurements(text, "m.json");
    } catch (const cs::InputError& e) {
      return e.where();
    }
    return std::string("no error");
  };
  const std::string head = R"({"schema": "clustersim-measurements/1", "device": "cpu-node", "measurements": [)";
  EXPECT_EQ(where(head + R"({"kernel": "gemm", "args": {"m": "64", "n": "64", "k": "64"}, "seconds": 1e-5})"),
            "m.json:1:158: malformed JSON: parse error at line 1, column 158: syntax error while parsing array - "
            "unexpected end of input; expected ']'");
  EXPECT_EQ(where(head + R"({"kernel": "gemm", "args": {"m": "64", "n": "64", "k": "0"}, "seconds": 1e-5}]})"),
            "m.json:1:63: at /measurements/0: --k must be positive, got 0");
  EXPECT_EQ(where(head +
                  R"({"kernel": "gemm", "args": {"m": "64", "n": "64", "k": "8", "dtype": "fp4"}, "seconds": 1e-5}]})"),
            "m.json:1:63: at /measurements/0: unknown dtype 'fp4' (expected fp64, fp32, tf32, bf16, fp16 or fp8)");
  EXPECT_EQ(where(head + R"({"kernel": "conv", "args": {}, "seconds": 1e-5}]})").find("unknown kernel 'conv'"), 33u);
  EXPECT_EQ(where(head + R"({"kernel": "memcpy", "args": {"bytes": "64"}, "seconds": 0}]})"),
            "m.json:1:126: at /measurements/0/seconds: must be positive, got 0");
  EXPECT_EQ(where(head + "]}"), "m.json:1:63: at /measurements: no measurements");
  EXPECT_EQ(where(R"({"schema": "clustersim-profile/1"})"),
            "m.json:1:2: at /schema: unsupported schema, expected clustersim-measurements/1");
}
