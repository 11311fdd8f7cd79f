// FSDP2 under torch.distributed.pipelining, as torchtitan runs it: a pipelined stage is gathered once a step and kept
// (reshard_after_forward off with PP), and its gradients accumulate whole in the reduce dtype until the last backward
// reduce-scatters them (framework.pipeline_keeps_unsharded, on in the fsdp profile).
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

// Metrics and breakdown of torchtitan's Llama 3 8B row (8 GPUs, FSDP, local batch 2) cut into `pp` stages.
nlohmann::json run_8b(int pp, bool keeps)
{
  static int n = 0;
  const auto dir =
      std::filesystem::temp_directory_path() / ("cs_fsdp_pp_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  auto r = cs::testing::run_clustersim(
      "run " + cs::testing::src("scenarios/reference/torchtitan-llama3-8b-fsdp.yaml") + " --quiet --out " +
      dir.string() + " --set workload.parallel.pp=" + std::to_string(pp) + " --set policies.pipeline=1f1b" +
      " --set workload.framework.pipeline_keeps_unsharded=" + (keeps ? "true" : "false"));
  EXPECT_EQ(r.code, 0) << r.err;
  std::ifstream in(dir / "report.json");
  auto report = nlohmann::json::parse(in, nullptr, false);
  std::filesystem::remove_all(dir);
  if (report.is_discarded())
    return nlohmann::json::object();
  nlohmann::json out = report["metrics"];
  out.update(report["breakdown"]);
  return out;
}

double get(const nlohmann::json& j, const char* key) { return j.value(key, -1.0); }

} // namespace

TEST(FsdpPipeline, AStageIsGatheredOnceAStepAndItsGradientsReducedOnce)
{
  const auto kept = run_8b(2, true), per_microbatch = run_8b(2, false);
  // dp 4 and 4 microbatches a step: gathers (forward and backward) and reductions every microbatch move far more.
  EXPECT_LT(get(kept, "network_bytes"), 0.5 * get(per_microbatch, "network_bytes"));
  EXPECT_LE(get(kept, "communication_parameter_gather_s"), get(per_microbatch, "communication_parameter_gather_s"));
  // Memory, on the same device: its gathered bf16 copy beside its fp32 shard, the master weights FSDP keeps (4 / dp + 2
  // bytes a parameter), against fp32 gradients kept whole (4 bytes); sharded, 4 / dp against 4 / dp.
  const double dp = 4;
  EXPECT_NEAR(get(kept, "memory_parameters_bytes") / get(kept, "memory_gradients_bytes"), (4 / dp + 2) / 4, 1e-9);
  EXPECT_NEAR(get(per_microbatch, "memory_parameters_bytes") / get(per_microbatch, "memory_gradients_bytes"),
              (4 / dp) / (4 / dp), 1e-9);
  EXPECT_GT(get(kept, "peak_memory_bytes"), get(per_microbatch, "peak_memory_bytes"));
  // The breakdown names the gathered copy (2 bytes a parameter of the stage), as part of the weights.
  EXPECT_NEAR(get(kept, "memory_gathered_parameters_bytes") / get(kept, "memory_gradients_bytes"), 2.0 / 4, 1e-9);
  EXPECT_FALSE(per_microbatch.contains("memory_gathered_parameters_bytes"));
}

TEST(FsdpPipeline, TheSummaryNamesTheGatheredCopy)
{
  auto r =
      cs::testing::run_clustersim("run " + cs::testing::src("scenarios/reference/torchtitan-llama3-8b-fsdp.yaml") +
                                  " --out " + (std::filesystem::temp_directory_path() / "cs_fsdp_pp_text").string() +
                                  " --set workload.parallel.pp=2 --set policies.pipeline=1f1b");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" of it the stage gathered for the step)"), std::string::npos) << r.out;
  std::filesystem::remove_all(std::filesystem::temp_directory_path() / "cs_fsdp_pp_text");
}

TEST(FsdpPipeline, WithoutAPipelineTheFlagChangesNothing)
{
  const auto on = run_8b(1, true), off = run_8b(1, false);
  EXPECT_EQ(get(on, "iteration_time_s"), get(off, "iteration_time_s"));
  EXPECT_EQ(get(on, "network_bytes"), get(off, "network_bytes"));
  EXPECT_EQ(get(on, "peak_memory_bytes"), get(off, "peak_memory_bytes"));
}
