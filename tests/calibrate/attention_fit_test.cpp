#include "calibrate/fit/attention_fit.hpp"
#include "calibrate/fit/profile_fit.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

namespace {

using cs::testing::device;

// A curve whose parameters all lie on the fit's grids, so the fit can find them exactly.
cs::AttentionEfficiency known_curve(double forward, double backward, double head_dim_half)
{
  cs::AttentionEfficiency a;
  a.forward = forward;
  a.forward_half_seq = 128;
  a.backward = backward;
  a.backward_half_seq = 512;
  a.causal_scale = 0.9;
  a.causal_half_seq_scale = 2;
  a.head_dim_half = head_dim_half;
  return a;
}

// Attention measurements over sequence, head size, mask and pass, timed by `truth`'s own model.
cs::Measurements attention_sweep(const cs::DeviceProfile& truth, bool cudnn)
{
  auto model = cs::make_cost_model(device("h100-sxm5"), truth);
  cs::Measurements m;
  m.device = "h100-sxm5";
  for (double seq : {512, 1024, 2048, 4096, 8192, 16384})
    for (double hd : {64, 128})
      for (bool causal : {false, true})
        for (bool backward : {false, true}) {
          std::map<std::string, std::string> args{{"batch", std::to_string(int(16384 / seq))},
                                                  {"heads", "32"},
                                                  {"seq_q", std::to_string(int(seq))},
                                                  {"head_dim", std::to_string(int(hd))},
                                                  {"causal", causal ? "true" : "false"},
                                                  {"backward", backward ? "true" : "false"},
                                                  {"cudnn", cudnn ? "true" : "false"}};
          cs::Measurement x{"attention", args, 0, 5, 0};
          x.seconds = model->predict(x.kernel()).total;
          m.items.push_back(x);
        }
  return m;
}

// The grid parameters exactly; the asymptotes within 0.5% (the fit leaves out the memory time, which the roofline
// takes when it is longer, as it is for a few short cuDNN forward passes).
void expect_curve(const cs::AttentionEfficiency& got, const cs::AttentionEfficiency& want)
{
  EXPECT_NEAR(got.forward / want.forward, 1.0, 0.005);
  EXPECT_NEAR(got.backward / want.backward, 1.0, 0.005);
  EXPECT_EQ(got.forward_half_seq, want.forward_half_seq);
  EXPECT_EQ(got.backward_half_seq, want.backward_half_seq);
  EXPECT_NEAR(got.causal_scale, want.causal_scale, 1e-9);
  EXPECT_EQ(got.causal_half_seq_scale, want.causal_half_seq_scale);
  EXPECT_EQ(got.head_dim_half, want.head_dim_half);
}

} // namespace

TEST(AttentionFit, RecoversFlashAndCudnnCurvesOnTopOfABase)
{
  cs::DeviceProfile truth = *cs::builtin_profile("h100-sxm5");
  truth.attention = known_curve(0.40, 0.30, 32);
  truth.attention_cudnn = known_curve(0.66, 0.56, 64);
  cs::Measurements m = attention_sweep(truth, false);
  cs::Measurements c = attention_sweep(truth, true);
  m.items.insert(m.items.end(), c.items.begin(), c.items.end());
  const cs::DeviceProfile base = *cs::builtin_profile("h100-sxm5"); // no cuDNN curve, FA2's the published one
  cs::FitOptions o;
  o.base = &base;
  cs::FitResult r = cs::fit_profile(m, device("h100-sxm5"), o);
  expect_curve(r.profile.attention, truth.attention);
  expect_curve(r.profile.attention_cudnn, truth.attention_cudnn);
  // The rest is the base's, and the held-out kernels (of both masks and both passes) are predicted within 0.5%.
  EXPECT_EQ(r.profile.launch_overhead, base.launch_overhead);
  EXPECT_EQ(r.profile.gemm_tiles.size(), base.gemm_tiles.size());
  bool causal_held = false, full_held = false, backward_held = false;
  for (const auto& x : r.residuals)
    if (x.held_out) {
      EXPECT_LT(std::abs(x.relative_error), 0.005) << x.kernel;
      (x.kernel.find("causal") != std::string::npos ? causal_held : full_held) = true;
      backward_held = backward_held || x.kernel.find("backward") != std::string::npos;
    }
  EXPECT_TRUE(causal_held && full_held && backward_held);
  EXPECT_EQ(r.profile.sources.at("attention").rfind("fitted by clustersim fit", 0), 0u);
}

TEST(AttentionFit, HeadSizeTermIsNormalisedAtHeadSize128)
{
  cs::AttentionEfficiency a = known_curve(0.4, 0.3, 0);
  const double at128 = a.share(false, false, 4096, 128), at64 = a.share(false, false, 4096, 64);
  EXPECT_DOUBLE_EQ(at128, at64); // no head-size term: the head size does not matter
  a.head_dim_half = 32;
  EXPECT_DOUBLE_EQ(a.share(false, false, 4096, 128), at128);
  EXPECT_NEAR(a.share(false, false, 4096, 64) / at128, (64.0 / 96) / (128.0 / 160), 1e-12);
  EXPECT_LE(a.share(false, false, 1e9, 1e6), 1.0); // the curve never passes the peak
}

TEST(AttentionFit, RefusesWhatCannotDetermineACurve)
{
  cs::DeviceProfile truth = *cs::builtin_profile("h100-sxm5");
  cs::Measurements cudnn_only = attention_sweep(truth, true);
  // Attention alone and no base: nothing determines the launch time, the GEMMs or the memory.
  EXPECT_THROW(cs::fit_profile(cudnn_only, device("h100-sxm5"), cs::FitOptions{}), std::invalid_argument);
  // cuDNN's curve is used only beside FlashAttention-2's.
  cs::DeviceProfile no_curve = truth;
  no_curve.attention = cs::AttentionEfficiency{};
  cs::FitOptions o;
  o.base = &no_curve;
  EXPECT_THROW(cs::fit_profile(cudnn_only, device("h100-sxm5"), o), std::invalid_argument);
  // One pass only.
  std::vector<cs::AttentionSample> forward_only;
  for (const auto& x : cudnn_only.items)
    if (auto k = std::get<cs::AttentionKernel>(x.kernel()); !k.backward)
      forward_only.push_back({k, x.seconds});
  EXPECT_THROW(cs::fit_attention_curve(forward_only, device("h100-sxm5"), 0), std::invalid_argument);
}

TEST(ProfileFit, BaseKeepsWhatTheMeasurementsDoNotDetermine)
{
  const cs::DeviceProfile& base = cs::testing::profile("h200-sxm");
  auto model = cs::make_cost_model(device("h200-sxm"), base);
  cs::Measurements m;
  m.device = "h200-sxm";
  for (double n : {1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384}) {
    cs::Measurement x{"gemm", {{"m", std::to_string(int(n))}, {"n", "4096"}, {"k", "4096"}, {"dtype", "fp16"}}, 0,
                      5, 0};
    x.seconds = model->predict(x.kernel()).total * 1.1; // 10% slower than the base says
    m.items.push_back(x);
  }
  cs::FitOptions o;
  o.base = &base;
  cs::FitResult r = cs::fit_profile(m, device("h200-sxm"), o);
  const cs::DeviceProfile& p = r.profile;
  EXPECT_LT(p.efficiency("fp16"), base.efficiency("fp16"));
  EXPECT_EQ(p.efficiency("bf16"), base.efficiency("bf16")); // not measured: kept
  EXPECT_EQ(p.copy_bandwidth.at("p2p"), base.copy_bandwidth.at("p2p"));
  EXPECT_EQ(p.memory_efficiency_for("rmsnorm"), base.memory_efficiency_for("rmsnorm"));
  EXPECT_EQ(p.attention.forward, base.attention.forward);
  EXPECT_EQ(p.attention_cudnn.forward, base.attention_cudnn.forward);
  EXPECT_EQ(p.sources.at("compute_efficiency").rfind("fitted by clustersim fit", 0), 0u);
  EXPECT_EQ(p.sources.at("compute_efficiency (entries not fitted)"), base.sources.at("compute_efficiency"));
  EXPECT_EQ(p.sources.at("attention"), base.sources.at("attention"));
}
