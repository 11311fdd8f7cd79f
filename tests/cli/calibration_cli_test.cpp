#include <array>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

Result clustersim(const std::string& args)
{
  static int counter = 0;
  fs::path err = fs::temp_directory_path() / ("cs_cal_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  FILE* pipe = popen((std::string(CS_BINARY) + " " + args + " 2>" + err.string()).c_str(), "r");
  Result r;
  std::array<char, 4096> buf{};
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), pipe)) > 0;)
    r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  fs::remove(err);
  return r;
}

std::string src(const std::string& rel) { return std::string(CS_SOURCE_DIR) + "/" + rel; }

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
  EXPECT_NEAR(j["tflops"].get<double>() / 790.0, 1.0, 0.15);
  auto text = clustersim("predict --device h200-sxm gemm --m 8192 --n 8192 --k 8192 --dtype bf16");
  EXPECT_NE(text.out.find("tile 256x128, 2048 tiles, 16 waves"), std::string::npos) << text.out;
}

TEST(CalibrationCli, PredictBadInputExitsTwo)
{
  for (const char* args : {"predict --device h200-sxm gemm --m 0 --n 8 --k 8", "predict --device h200-sxm gemm --m 8 --n 8",
                           "predict --device h200-sxm conv --m 8", "predict --device h200-sxm gemm --m 8 --n 8 --k 8 --dtype fp4",
                           "predict --device nosuch gemm --m 8 --n 8 --k 8", "predict gemm --m 8 --n 8 --k 8",
                           "predict --device v100-sxm2 gemm --m 8 --n 8 --k 8 --dtype bf16",
                           "predict --profile /nonexistent.json gemm --m 8 --n 8 --k 8"}) {
    auto r = clustersim(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

TEST(CalibrationCli, CpuLoopCalibrateFitRegress)
{
  // The whole loop on this machine: measure, fit with held-out shapes, regress the fit against the measurements.
  fs::path m = temp("m.json"), p = temp("p.json");
  auto cal = clustersim("calibrate --device cpu --out " + m.string());
  ASSERT_EQ(cal.code, 0) << cal.err;
  auto fit = clustersim("fit " + m.string() + " --out " + p.string());
  ASSERT_EQ(fit.code, 0) << fit.err;
  auto held = fit.out.substr(fit.out.find("held-out residuals:"));
  for (const char* family : {"gemm ", "bandwidth "}) {
    auto line = held.substr(held.find(std::string("  ") + family));
    double median = std::stod(line.substr(line.find("median |error|") + 14));
    EXPECT_LE(median, 10.0) << family << " held-out median " << median << "%\n" << fit.out;
  }
  auto regress = clustersim("regress --profile " + p.string() + " --measurements " + m.string());
  EXPECT_EQ(regress.code, 0) << regress.out;
  EXPECT_NE(regress.out.find("within tolerance 10.0%"), std::string::npos);
  // An absurd tolerance fails the regression with exit 1.
  EXPECT_EQ(clustersim("regress --profile " + p.string() + " --measurements " + m.string() + " --tolerance 0.000001").code, 1);
  fs::remove(m);
  fs::remove(p);
}

TEST(CalibrationCli, ShippedCpuProfileRegressesOnItsMeasurements)
{
  auto r = clustersim("regress --profile " + src("calibrate/profiles/cpu-node.json") + " --measurements " +
                      src("calibrate/measurements/cpu-node.json"));
  EXPECT_EQ(r.code, 0) << r.out;
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
