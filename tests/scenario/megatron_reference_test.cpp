// validation.md §3: predicted TFLOP/s per GPU within +-15% of Megatron-LM's Table 1 (the rows runnable so far).
#include "tests/cli/run_cli.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {
double tflops_per_gpu(const std::string& scenario)
{
  auto out = std::filesystem::temp_directory_path() / ("cs_megatron_" + std::to_string(::getpid()));
  auto r = cs::testing::run_clustersim(std::string("run ") + CS_SOURCE_DIR + "/scenarios/reference/" + scenario +
                                       " --quiet --out " + out.string());
  EXPECT_EQ(r.code, 0) << r.err;
  std::ifstream in(out / "report.json");
  auto report = nlohmann::json::parse(in);
  std::filesystem::remove_all(out);
  return report["metrics"]["tflops_per_gpu"].get<double>();
}
} // namespace

TEST(MegatronReference, Gpt17BDataParallelOn32A100)
{
  EXPECT_NEAR(tflops_per_gpu("megatron-1.7b.yaml") / 137.0, 1.0, 0.15);
}

TEST(MegatronReference, Gpt75BTensorAndDataParallelOn128A100)
{
  EXPECT_NEAR(tflops_per_gpu("megatron-7.5b.yaml") / 142.0, 1.0, 0.15);
}

// Rows 3-5 combine tensor, pipeline (interleaved) and data parallelism.
TEST(MegatronReference, Gpt391BTensorPipelineDataOn512A100)
{
  EXPECT_NEAR(tflops_per_gpu("megatron-39.1b.yaml") / 138.0, 1.0, 0.15);
}

TEST(MegatronReference, Gpt1456BTensorPipelineDataOn1536A100)
{
  EXPECT_NEAR(tflops_per_gpu("megatron-145.6b.yaml") / 148.0, 1.0, 0.15);
}

TEST(MegatronReference, Gpt5296BTensorPipelineDataOn2520A100)
{
  EXPECT_NEAR(tflops_per_gpu("megatron-529.6b.yaml") / 163.0, 1.0, 0.15);
}
