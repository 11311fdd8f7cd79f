// validation.md §3: predicted TFLOP/s per GPU within +-15% of Megatron-LM's Table 1 (the rows runnable so far).
#include "tests/cli/run_cli.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

TEST(MegatronReference, Gpt17BDataParallelOn32A100)
{
  auto out = std::filesystem::temp_directory_path() / ("cs_megatron_" + std::to_string(::getpid()));
  auto r = cs::testing::run_clustersim(std::string("run ") + CS_SOURCE_DIR +
                                       "/scenarios/reference/megatron-1.7b.yaml --quiet --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(out / "report.json");
  auto report = nlohmann::json::parse(in);
  EXPECT_NEAR(report["metrics"]["tflops_per_gpu"].get<double>() / 137.0, 1.0, 0.15);
  std::filesystem::remove_all(out);
}
