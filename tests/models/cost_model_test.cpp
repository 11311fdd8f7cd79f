#include "base/input_error.hpp"
#include "models/cost/kernel_cost_model.hpp"
#include "tests/test_support.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace {

using cs::testing::device;
using cs::testing::profile;
double tflops(const cs::KernelCostModel& m, double n, const char* dtype)
{
  cs::GemmKernel g{n, n, n, 1, dtype};
  return cs::kernel_flops(g) / m.predict(g).total / 1e12;
}
} // namespace

TEST(GemmWaves, NvidiaGuideExampleA100)
{
  // validation.md §1: A100, 108 SMs, 256x128 tiles, one CTA per SM; M = 2304, K = 4096.
  const cs::GemmTile tile{256, 128, 1.0, ""};
  EXPECT_EQ(cs::gemm_waves(2304, 1536, 1, tile, 108, 1).waves, 1);
  EXPECT_EQ(cs::gemm_waves(2304, 1536, 1, tile, 108, 1).tiles, 108);
  EXPECT_EQ(cs::gemm_waves(2304, 1537, 1, tile, 108, 1).waves, 2);
  EXPECT_EQ(cs::gemm_waves(2304, 3072, 1, tile, 108, 1).waves, 2);
  EXPECT_EQ(cs::gemm_waves(2304, 3073, 1, tile, 108, 1).waves, 3);
  // N x N: 1792 -> 7 x 14 = 98 tiles (1 wave); 1793 -> 8 x 15 = 120 tiles (2 waves).
  EXPECT_EQ(cs::gemm_waves(1792, 1792, 1, tile, 108, 1).tiles, 98);
  EXPECT_EQ(cs::gemm_waves(1792, 1792, 1, tile, 108, 1).waves, 1);
  EXPECT_EQ(cs::gemm_waves(1793, 1793, 1, tile, 108, 1).tiles, 120);
  EXPECT_EQ(cs::gemm_waves(1793, 1793, 1, tile, 108, 1).waves, 2);
}

TEST(GemmWaves, AWaveBoundaryCostsAStep)
{
  // With only the 256x128 tile, one extra column past a wave boundary adds a whole wave of time.
  cs::DeviceProfile p = profile("a100-sxm4-80gb");
  p.gemm_tiles = {cs::GemmTile{256, 128, 1.0, ""}};
  cs::GemmWaveModel m(device("a100-sxm4-80gb"), p);
  auto one = m.predict(cs::GemmKernel{2304, 1536, 4096, 1, "fp16"});
  auto two = m.predict(cs::GemmKernel{2304, 1537, 4096, 1, "fp16"});
  EXPECT_EQ(one.model, "gemm-waves");
  EXPECT_EQ(one.detail, "tile 256x128, 108 tiles, 1 wave");
  EXPECT_NEAR(two.compute / one.compute, 2.0, 1e-12);
}

TEST(DatasheetProfiles, A100Fp16GemmSweepWithinBand)
{
  // validation.md §2: cuBLASLt FP16 m=n=k on A100-SXM4-80GB, +-15% for n >= 2048.
  auto m = cs::make_cost_model(device("a100-sxm4-80gb"), profile("a100-sxm4-80gb"));
  const std::vector<std::pair<double, double>> measured = {{2048, 221.8}, {4096, 228.0}, {8192, 253.7}, {16384, 256.5}};
  for (auto [n, tf] : measured)
    EXPECT_NEAR(tflops(*m, n, "fp16") / tf, 1.0, 0.15) << n;
}

TEST(DatasheetProfiles, BabelStreamTriadWithinBand)
{
  // Triad a = b + s c on 2^25 doubles: reads 2 and writes 1 array. A100-80GB 1.70 TB/s, H100 2.97 TB/s (+-10%).
  const double n = 33554432, bytes = 3 * 8 * n;
  cs::BandwidthKernel triad{"triad", 2 * 8 * n, 8 * n, 2 * n, "fp64"};
  for (auto [name, tbps] : {std::pair{"a100-sxm4-80gb", 1.70}, std::pair{"h100-sxm5", 2.97}}) {
    auto m = cs::make_cost_model(device(name), profile(name));
    EXPECT_NEAR(bytes / m->predict(triad).total / 1e12 / tbps, 1.0, 0.10) << name;
  }
}

TEST(DatasheetProfiles, H200GemmAndCopyWithinBand)
{
  auto m = cs::make_cost_model(device("h200-sxm"), profile("h200-sxm"));
  EXPECT_NEAR(tflops(*m, 8192, "bf16") / 790.0, 1.0, 0.15);
  cs::MemcpyKernel copy{1073741824.0, "d2d"};
  double tbps = cs::kernel_bytes(copy) / m->predict(copy).total / 1e12;
  EXPECT_NEAR(tbps / 4.3, 1.0, 0.15);
}

TEST(Roofline, ComputeAndMemoryBound)
{
  cs::RooflineModel m(device("h100-sxm5"), profile("h100-sxm5"));
  cs::GemmKernel gemm{8192, 8192, 8192, 1, "bf16"};
  auto b = m.predict(gemm);
  EXPECT_TRUE(b.compute_bound());
  EXPECT_EQ(b.model, "roofline");
  EXPECT_NEAR(b.total, 2.31e-6 + 2.0 * 8192 * 8192 * 8192 / (989.4e12 * 0.803), 1e-12);
  cs::MemcpyKernel copy{1073741824.0, "d2d"};
  auto c = m.predict(copy);
  EXPECT_FALSE(c.compute_bound());
  // Bandwidth-bound: the profile's efficiency, ramped by size (a 2 GiB copy is all but at the asymptote).
  const cs::DeviceProfile& hp = profile("h100-sxm5");
  const double bytes = 2.0 * 1073741824.0;
  EXPECT_NEAR(c.total, 2.31e-6 + bytes / (3350e9 * hp.memory_efficiency * hp.memory_ramp(bytes)), 1e-12);
  EXPECT_GT(hp.memory_ramp(bytes), 0.99);
  // A 1 MB kernel is far from it: its bandwidth share is bytes / (bytes + half) of the asymptote.
  const cs::BandwidthKernel small{"triad", 0.5e6, 0.5e6, 0, "bf16"};
  const double small_gbps = 1e6 / (m.predict(small).total - 2.31e-6);
  EXPECT_NEAR(small_gbps / (3350e9 * hp.memory_efficiency_for("bandwidth/triad")), 1e6 / (1e6 + hp.memory_half_bytes),
              1e-9);
  auto h2d = m.predict(cs::MemcpyKernel{1e9, "h2d"});
  EXPECT_NEAR(h2d.total, 2.31e-6 + 1e9 / 51e9, 1e-12);
  EXPECT_THROW(cs::RooflineModel(device("v100-sxm2"), profile("v100-sxm2")).predict(gemm), std::invalid_argument);
}

TEST(ProfiledTable, ReproducesPointsAndInterpolatesPowerLaws)
{
  cs::DeviceProfile p = profile("h100-sxm5");
  // t = 1e-6 * (bytes / 1e6)^0.9 on a grid of sizes.
  cs::ProfileTable t{"memcpy", "d2d", {}, {}};
  for (double b : {1e6, 4e6, 16e6, 64e6}) {
    t.shapes.push_back({b});
    t.seconds.push_back(1e-6 * std::pow(b / 1e6, 0.9));
  }
  p.tables = {t};
  auto m = cs::make_cost_model(device("h100-sxm5"), p);
  auto exact = m->predict(cs::MemcpyKernel{4e6, "d2d"});
  EXPECT_EQ(exact.model, "profiled");
  EXPECT_NEAR(exact.total, 1e-6 * std::pow(4.0, 0.9), 1e-15);
  auto between = m->predict(cs::MemcpyKernel{8e6, "d2d"});
  EXPECT_NEAR(between.total / (1e-6 * std::pow(8.0, 0.9)), 1.0, 1e-9);
  // Outside the table's range the analytical model answers.
  EXPECT_EQ(m->predict(cs::MemcpyKernel{1e9, "d2d"}).model, "roofline");
  EXPECT_EQ(m->predict(cs::MemcpyKernel{8e6, "h2d"}).model, "roofline");
}

TEST(ProfiledTable, GemmTableInThreeDimensions)
{
  cs::DeviceProfile p = profile("h100-sxm5");
  cs::ProfileTable t{"gemm", "bf16", {}, {}};
  for (double m : {1024, 2048, 4096})
    for (double n : {1024, 2048, 4096})
      for (double k : {1024, 2048, 4096}) {
        t.shapes.push_back({m, n, k});
        t.seconds.push_back(2 * m * n * k / 700e12);
      }
  p.tables = {t};
  auto model = cs::make_cost_model(device("h100-sxm5"), p);
  auto b = model->predict(cs::GemmKernel{3000, 1500, 2500, 1, "bf16"});
  EXPECT_EQ(b.model, "profiled");
  EXPECT_NEAR(b.total / (2.0 * 3000 * 1500 * 2500 / 700e12), 1.0, 1e-9);
  EXPECT_EQ(model->predict(cs::GemmKernel{3000, 1500, 2500, 1, "fp16"}).model, "gemm-waves");
}

TEST(Profiles, ShippedForEveryGpuOfTheCatalog)
{
  for (const auto& [name, d] : cs::DeviceCatalog::builtin().all())
    if (d.kind == "gpu") {
      ASSERT_NE(cs::builtin_profile(name), nullptr) << name;
      const std::string origin = cs::builtin_profile(name)->origin;
      EXPECT_TRUE(origin == "datasheet" || origin == "fit") << name << " " << origin;
      for (const char* key : {"launch_overhead_s", "compute_efficiency", "memory_efficiency"})
        EXPECT_TRUE(cs::builtin_profile(name)->sources.count(key)) << name << " " << key;
    }
}

TEST(Profiles, RoundTripThroughJson)
{
  const auto& p = profile("a100-sxm4-80gb");
  auto again = cs::parse_profile(cs::profile_to_json(p), "x.json");
  EXPECT_EQ(cs::profile_to_json(again), cs::profile_to_json(p));
}

TEST(Profiles, MalformedInputIsAPositionedError)
{
  auto where = [](const std::string& text) {
    try {
      cs::parse_profile(text, "p.json");
    } catch (const cs::InputError& e) {
      return e.where();
    }
    return std::string("no error");
  };
  EXPECT_EQ(where("{\"schema\": \"clustersim-profile/1\",\n \"device\": "),
            "p.json:2:12: malformed JSON: parse error at line 2, column 12: syntax error while parsing value - "
            "unexpected end of input; expected '[', '{', or a literal");
  EXPECT_EQ(where("{\"schema\": \"other/2\"}"),
            "p.json:1:2: at /schema: unsupported schema, expected clustersim-profile/1");
  std::string ok = cs::profile_to_json(profile("h100-sxm5"));
  std::string bad = ok;
  const auto at = bad.find("\"memory_efficiency\": ");
  bad.replace(at, bad.find(',', at) - at, "\"memory_efficiency\": -1");
  EXPECT_EQ(where(bad), "p.json:6:3: at /memory_efficiency: must be positive, got -1");
  bad = ok;
  bad.replace(bad.find("\"launch_overhead_s\""), 19, "\"launch\"");
  EXPECT_EQ(where(bad), "p.json:1:1: missing key 'launch_overhead_s'");
  // The attention curve, the size ramp and the GEMM prologue are checked like every other field.
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = ok;
    const auto a = t.find(from);
    EXPECT_NE(a, std::string::npos) << from;
    return a == std::string::npos ? t : t.replace(a, from.size(), to);
  };
  // An efficiency above 1 would make the device faster than its datasheet: refused.
  EXPECT_NE(where(with("\"fp8\": ", "\"fp8\": 1.5, \"x\": ")).find("compute_efficiency/fp8: must be at most 1"),
            std::string::npos);
  EXPECT_NE(where(with("\"efficiency\": 0.379", "\"efficiency\": 1.5")).find("efficiency must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(where(with("\"k_overhead\": 128", "\"k_overhead\": -3")).find("k_overhead: must be in [0, 1e6]"),
            std::string::npos);
  EXPECT_NE(where(with("\"memory_half_bytes\": 2400000", "\"memory_half_bytes\": -1"))
                .find("memory_half_bytes: must be in [0, 1e12] bytes"),
            std::string::npos);
  // Values no device has, and an empty tile list, were once taken silently (the model fell back without tiles).
  EXPECT_NE(where(with("\"memory_half_bytes\": 2400000", "\"memory_half_bytes\": 24000000000000")).find("[0, 1e12]"),
            std::string::npos);
  const std::string no_tiles =
      ok.substr(0, ok.find("\"tiles\": [") + 10) + "]" + ok.substr(ok.find(']', ok.find("\"tiles\": [")) + 1);
  EXPECT_NE(where(no_tiles).find("tiles: expected a non-empty list"), std::string::npos) << where(no_tiles);
  EXPECT_NE(where(with("\"launch_overhead_s\": ", "\"launch_overhead_s\": 1e300, \"y\": ")).find("[0, 1] s"),
            std::string::npos);
  EXPECT_THROW(cs::load_profile("/nonexistent.json"), cs::InputError);
  // A measured cuDNN curve and a head-size term are read like FlashAttention-2's curve.
  const std::string h200 = cs::profile_to_json(profile("h200-sxm"));
  auto h200_with = [&](const std::string& from, const std::string& to) {
    std::string t = h200;
    const auto a = t.find(from);
    EXPECT_NE(a, std::string::npos) << from;
    return a == std::string::npos ? t : t.replace(a, from.size(), to);
  };
  EXPECT_NE(
      where(h200_with("\"head_dim_half\": 16", "\"head_dim_half\": -16")).find("head_dim_half: must not be negative"),
      std::string::npos);
  EXPECT_NE(where(h200_with("\"head_dim_half\": 64", "\"head_dim_half\": -1")).find("cudnn/head_dim_half: must not"),
            std::string::npos)
      << where(h200_with("\"head_dim_half\": 64", "\"head_dim_half\": -1"));
  auto again = cs::parse_profile(h200, "h200.json");
  EXPECT_EQ(cs::profile_to_json(again), h200);
  EXPECT_GT(again.attention_cudnn.forward, again.attention.forward);
  // Ambiguous or absurd JSON: a key twice, a number past double's range, fractional tiles, tables of mixed shapes.
  EXPECT_EQ(where(with("\"origin\": ", "\"device\": \"x\", \"origin\": ")).substr(0, 47),
            "p.json:4:3: key 'device' appears twice in one o");
  EXPECT_NE(where(with("\"launch_overhead_s\": ", "\"launch_overhead_s\": 1e400, \"x\": "))
                .find("beyond the range of a double"),
            std::string::npos);
  EXPECT_NE(where(with("\"ctas_per_sm\": 1", "\"ctas_per_sm\": 0.5")).find("must be a whole number from 1 to 64"),
            std::string::npos);
}

TEST(Kernels, MakeKernelRejectsBadArguments)
{
  EXPECT_NO_THROW(cs::make_kernel("gemm", {{"m", "8192"}, {"n", "8192"}, {"k", "8192"}, {"dtype", "bf16"}}));
  EXPECT_THROW(cs::make_kernel("gemn", {}), std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("gemm", {{"m", "0"}, {"n", "1"}, {"k", "1"}}), std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("gemm", {{"m", "-4"}, {"n", "1"}, {"k", "1"}}), std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("gemm", {{"m", "2"}, {"n", "1"}, {"k", "1"}, {"dtype", "fp4"}}), std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("gemm", {{"m", "2"}, {"n", "1"}}), std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("memcpy", {{"bytes", "10"}, {"direction", "sideways"}}), std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("softmax", {{"rows", "10"}, {"cols", "x"}}), std::invalid_argument);
  EXPECT_THROW(cs::make_kernel("softmax", {{"rows", "10"}, {"cols", "2"}, {"heads", "3"}}), std::invalid_argument);
  auto a = cs::make_kernel("attention", {{"heads", "8"}, {"seq_q", "1024"}, {"head_dim", "64"}, {"causal", "true"}});
  EXPECT_DOUBLE_EQ(cs::kernel_flops(a), 4.0 * 8 * 1024 * 1024 * 64 / 2);
}

TEST(GemmWaves, KOverheadIsCountedIn16BitSteps)
{
  // The prologue moves a fixed number of bytes: an fp8 main loop needs twice as many of its K-steps, fp32 half.
  EXPECT_EQ(cs::gemm_k_steps(1024, 128, "bf16"), 1152);
  EXPECT_EQ(cs::gemm_k_steps(1024, 128, "fp8"), 1280);
  EXPECT_EQ(cs::gemm_k_steps(1024, 128, "fp32"), 1088);
  // Against the public H100 FP8 sweep (hardware.yaml): 1024^3 measured 274.1 TFLOP/s, the 16-bit count gave 361.6.
  auto m = cs::make_cost_model(device("h100-sxm5"), profile("h100-sxm5"));
  EXPECT_LT(tflops(*m, 1024, "fp8"), 345);
}

TEST(Attention, HeadsOf64RunSlowerPerFlopOnHopperAsFlashAttention3PublishedThem)
{
  // FlashAttention-3's H100 SXM5 forward sweeps (non-causal, 16K): FlashAttention-2 324 TFLOP/s at head size 64
  // against 370 at 128, cuDNN 413 against 595; head size 256 no faster than 128. The H100 and H800 profiles carry it.
  for (const char* name : {"h100-sxm5", "h800-sxm5"}) {
    auto m = cs::make_cost_model(device(name), profile(name));
    auto rate = [&](double head_dim, bool cudnn) {
      cs::AttentionKernel a;
      a.batch = 1;
      a.heads = a.kv_heads = 2048 / head_dim; // the paper's sweeps hold heads x head size at 2,048
      a.seq_q = a.seq_kv = 16384;
      a.head_dim = head_dim;
      a.cudnn = cudnn;
      const auto cost = m->predict(a);
      return cs::kernel_flops(a) / (cost.total - cost.launch);
    };
    EXPECT_NEAR(rate(64, false) / rate(128, false), 324.0 / 370, 0.01) << name;
    EXPECT_NEAR(rate(64, true) / rate(128, true), 413.0 / 595, 0.01) << name;
    EXPECT_NEAR(rate(256, true) / rate(128, true), 1.0, 1e-9) << name;
    EXPECT_NEAR(rate(128, true) / rate(128, false), 600.0 / 370, 0.01) << name; // the ratio at 128, as before
  }
  // The profile field reads, writes back and refuses what no kernel has.
  const std::string h100 = cs::profile_to_json(profile("h100-sxm5"));
  EXPECT_EQ(cs::profile_to_json(cs::parse_profile(h100, "h100.json")), h100);
  std::string bad = h100;
  bad.replace(bad.find("\"cudnn_head_dim_half\": 101"), 26, "\"cudnn_head_dim_half\": -1"); // -1 or -1.0
  try {
    cs::parse_profile(bad, "h100.json");
    ADD_FAILURE() << "a negative head-size half-point was taken";
  } catch (const cs::InputError& e) {
    EXPECT_EQ(e.where().rfind("h100.json:", 0), 0u) << e.where();
    EXPECT_NE(e.where().find("cudnn_head_dim_half: must not be negative"), std::string::npos) << e.where();
  }
}

TEST(Attention, TritonFlashAttentionRunsAtTritonsMeasuredShareOfFa2)
{
  // Triton's A100 regression point (causal, 4 x 48 heads, seq 4096, head dim 64, fp16): 0.37 forward and 0.25
  // backward of the tensor-core peak at its CI's 1,350 MHz, i.e. 0.354 and 0.239 of the 1,410 MHz peak.
  auto m = cs::make_cost_model(device("a100-sxm4-80gb"), profile("a100-sxm4-80gb"));
  auto share = [&](bool triton, bool backward) {
    cs::AttentionKernel a{4, 48, 48, 4096, 4096, 64, true, "fp16", backward, triton};
    const auto cost = m->predict(a);
    return cs::kernel_flops(a) / (cost.total - cost.launch) / device("a100-sxm4-80gb").peak("fp16");
  };
  EXPECT_NEAR(share(true, false), 0.37 * 1350 / 1410, 0.005);
  EXPECT_NEAR(share(true, true), 0.25 * 1350 / 1410, 0.005);
  EXPECT_GT(share(false, false), 1.5 * share(true, false)); // FlashAttention-2's CUDA kernels
  // The flag parses, and the kernel says which implementation it is.
  auto k = cs::make_kernel("attention", {{"heads", "8"}, {"seq_q", "1024"}, {"head_dim", "64"}, {"triton", "true"}});
  EXPECT_TRUE(std::get<cs::AttentionKernel>(k).triton);
  EXPECT_NE(cs::describe_kernel(k).find(" triton "), std::string::npos);
}
