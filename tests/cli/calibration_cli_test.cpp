#include "calibrate/fit/measurements.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

using cs::testing::clustersim;
using cs::testing::src;

using Result = cs::testing::CliResult;
fs::path temp(const std::string& name)
{
  return fs::temp_directory_path() / ("cs_cal_" + std::to_string(::getpid()) + "_" + name);
}

} // namespace

TEST(CalibrationCli, PredictH200Gemm)
{
  auto r = clustersim("predict --device h200-sxm gemm --m 8192 --n 8192 --k 8192 --dtype bf16 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "gemm-waves");
  // cuBLAS on the lent H200, 2026-12-04 (calibrate/measurements/h200-sxm-20261204.json): 678.1 TFLOP/s; PyTorch on
  // another lent H200 (validation.md section 2): about 790.
  EXPECT_NEAR(j["tflops"].get<double>() / 678.1, 1.0, 0.10);
  EXPECT_NEAR(j["tflops"].get<double>() / 790.0, 1.0, 0.15);
  auto text = clustersim("predict --device h200-sxm gemm --m 8192 --n 8192 --k 8192 --dtype bf16");
  EXPECT_NE(text.out.find("tile 128x64, 8192 tiles, 63 waves"), std::string::npos) << text.out;
}

TEST(CalibrationCli, PredictBadInputExitsTwo)
{
  for (const char* args :
       {"predict --device h200-sxm gemm --m 0 --n 8 --k 8", "predict --device h200-sxm gemm --m 8 --n 8",
        "predict --device h200-sxm conv --m 8", "predict --device h200-sxm gemm --m 8 --n 8 --k 8 --dtype fp4",
        "predict --device nosuch gemm --m 8 --n 8 --k 8", "predict gemm --m 8 --n 8 --k 8",
        "predict --device v100-sxm2 gemm --m 8 --n 8 --k 8 --dtype bf16",
        "predict --profile /nonexistent.json gemm --m 8 --n 8 --k 8"}) {
    auto r = clustersim(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

TEST(CalibrationCli, FitReadsSeveralFilesOfOneDeviceOnTopOfABase)
{
  fs::path out = temp("h200-refit.json");
  auto r = clustersim("fit " + src("calibrate/measurements/h200-sxm-20261204.json") + " " +
                      src("calibrate/measurements/h200-sxm-torch-20261204.json") + " --base " +
                      src("calibrate/profiles/h200-sxm.json") + " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("attention curves: FlashAttention-2 from"), std::string::npos) << r.out;
  // Refitting the shipped profile on its own measurements gives it back.
  auto refit = cs::load_profile(out.string());
  const auto& shipped = cs::testing::profile("h200-sxm");
  EXPECT_DOUBLE_EQ(refit.efficiency("bf16"), shipped.efficiency("bf16"));
  EXPECT_DOUBLE_EQ(refit.attention_cudnn.forward, shipped.attention_cudnn.forward);
  EXPECT_EQ(refit.copy_bandwidth.at("p2p"), shipped.copy_bandwidth.at("p2p"));
  // Files of two devices, or a base of another device, are refused (exit 2, one line, nothing written).
  fs::path none = temp("never.json");
  for (const std::string& args :
       {"fit " + src("calibrate/measurements/h200-sxm-20261204.json") + " " +
            src("calibrate/measurements/cpu-node.json") + " --out " + none.string(),
        "fit " + src("calibrate/measurements/h200-sxm-20261204.json") + " --base " +
            src("calibrate/profiles/h100-sxm5.json") + " --out " + none.string(),
        "fit " + src("calibrate/measurements/h200-sxm-20261204.json") + " --base /nonexistent.json --out " +
            none.string()}) {
    auto bad = clustersim(args);
    EXPECT_EQ(bad.code, 2) << args;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << args << ": " << bad.err;
    EXPECT_FALSE(fs::exists(none)) << args;
  }
  EXPECT_NE(clustersim("fit " + src("calibrate/measurements/h200-sxm-20261204.json") + " " +
                       src("calibrate/measurements/cpu-node.json") + " --out " + none.string())
                .err.find("cpu-node.json:1:1: measures cpu-node"),
            std::string::npos);
}

TEST(CalibrationCli, ShippedCpuProfileRegressesOnItsMeasurements)
{
  auto r = clustersim("regress --profile " + src("calibrate/profiles/cpu-node.json") + " --measurements " +
                      src("calibrate/measurements/cpu-node.json"));
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST(CalibrationCli, RegressCatchesAUniformSlowdown)
{
  // Every measurement 10% slower: each |error| is about 9%, inside the 10% tolerance, but the signed median moves
  // by as much, beyond the bias tolerance (half the tolerance).
  auto m = cs::load_measurements(src("calibrate/measurements/cpu-node.json"));
  for (auto& x : m.items)
    x.seconds *= 1.1;
  fs::path slow = temp("slow.json");
  std::ofstream(slow) << cs::measurements_to_json(m);
  auto r =
      clustersim("regress --profile " + src("calibrate/profiles/cpu-node.json") + " --measurements " + slow.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("bias tolerance"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("BEYOND"), std::string::npos) << r.out;
  fs::remove(slow);
}

TEST(CalibrationCli, ProfileForAnotherDeviceExitsTwo)
{
  auto r = clustersim("regress --profile " + src("calibrate/profiles/h100-sxm5.json") + " --measurements " +
                      src("calibrate/measurements/cpu-node.json"));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, src("calibrate/profiles/h100-sxm5.json") +
                       ":1:1: profile is for 'h100-sxm5' but the measurements are from 'cpu-node'\n");
}

TEST(CalibrationCli, TruncatedFilesExitTwo)
{
  fs::path bad = temp("truncated.json");
  std::ifstream in(src("calibrate/measurements/cpu-node.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(bad) << text.substr(0, text.size() / 2);
  auto r = clustersim("fit " + bad.string() + " --out " + temp("never.json").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind(bad.string() + ":", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("malformed JSON"), std::string::npos);
  EXPECT_FALSE(fs::exists(temp("never.json")));
  auto p = clustersim("predict --profile " + bad.string() + " gemm --m 8 --n 8 --k 8");
  EXPECT_EQ(p.code, 2);
  fs::remove(bad);
}

TEST(CalibrationCli, CudaCalibrationNeedsItsBinary)
{
  // Built only where CMake finds CUDA; without a GPU it must fail cleanly (exit 1), never crash.
  auto r = clustersim("calibrate --device cuda --quick --out " + temp("cuda.json").string());
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_FALSE(r.err.empty());
}

TEST(CalibrationCli, DegenerateMeasurementsAreBadInputNotAFailedFit)
{
  // Once exit 1 with "efficiency of -nan": one point, every time the same, or a time of 1e300 s.
  std::ifstream in(src("calibrate/measurements/a100-sxm4-80gb-public.json"));
  const auto full = nlohmann::json::parse(in);
  auto variant = [&](const std::string& name, const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json j = full;
    change(j["measurements"]);
    const fs::path path = temp(name + ".json");
    std::ofstream(path) << j.dump(1);
    return path;
  };
  const fs::path one = variant("one", [](nlohmann::json& m) { m.erase(m.begin() + 1, m.end()); });
  const fs::path same = variant("same", [](nlohmann::json& m) {
    for (auto& x : m)
      x["seconds"] = 1e-3;
  });
  const fs::path huge = variant("huge", [](nlohmann::json& m) { m[2]["seconds"] = 1e300; });
  for (const auto& [path, words] : {std::pair<fs::path, std::string>{one, "too few training measurements"},
                                    {same, "do not determine the fp16 efficiency"},
                                    {huge, "a kernel of more than an hour"}}) {
    auto r = clustersim("fit " + path.string() + " --out " + temp("never.json").string());
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err.rfind(path.string() + ":", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("nan"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(temp("never.json")));
    fs::remove(path);
  }
}
