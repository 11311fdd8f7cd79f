// validation.md §5: MosaicML llm-foundry's FSDP benchmarks (MPT models, ZeRO-3, FlashAttention in Triton) as tokens/s
// per GPU. Every published configuration must fit in its GPU's memory, each row must be within +-15% and the mean
// within 8% (the fidelity issue's band; today -4.8% to +13.7%, mean 4.8% with MPT-70B, docs/validation.md). The
// 64-GPU MPT-70B row takes a few seconds more and is left to bench/validate.sh.
#include "tests/scenario/reference_run.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct FoundryRow {
  const char* name;
  int gpus;
  double tokens_per_s_per_gpu; // published
};

// Relative error of the simulated tokens/s per GPU, after checking the configuration fits.
double error_of(const FoundryRow& row)
{
  const auto m = cs::testing::reference_metrics(std::string("llmfoundry-") + row.name + ".yaml");
  EXPECT_TRUE(m["fits_in_memory"].get<bool>()) << row.name;
  return m["tokens_per_s"].get<double>() / row.gpus / row.tokens_per_s_per_gpu - 1;
}

} // namespace

TEST(LlmFoundryReference, EveryRowFitsAndStaysInItsBand)
{
  const FoundryRow rows[] = {{"a100-80gb-mpt-760m", 8, 32434}, {"a100-80gb-mpt-1b", 8, 20513},
                             {"a100-80gb-mpt-3b", 8, 10811},   {"a100-80gb-mpt-7b", 8, 4641},
                             {"a100-80gb-mpt-13b", 8, 2262},   {"a100-80gb-mpt-30b", 8, 916},
                             {"h100-mpt-1b", 16, 46037},       {"h100-mpt-7b", 8, 10643}};
  double sum = 0;
  for (const FoundryRow& row : rows) {
    const double e = error_of(row);
    EXPECT_LT(std::abs(e), 0.15) << row.name << ": " << e * 100 << "%";
    sum += std::abs(e);
  }
  const double mean = sum / std::size(rows);
  EXPECT_LT(mean, 0.08) << "mean |error| " << mean * 100 << "%";
}

TEST(LlmFoundryReference, FsdpReductionsOverlapTheBackwardPassOnBothBackends)
{
  // MPT-13B, 3 microbatches a step, each reduce-scattering its fp32 gradients. FSDP issues each reduction from its
  // post-backward hook between the gathers its prefetch issues, on the one communication stream: they hide behind the
  // backward pass. Queued after the step's last gather instead (before 2026-12-03), 90% of the 0.59 s of reductions
  // ran after the backward pass (0.54 s exposed).
  for (const char* backend : {"analytical", "simgrid"}) {
    const auto out = std::filesystem::temp_directory_path() / ("cs_fsdp_order_" + std::to_string(::getpid()));
    auto r = cs::testing::run_clustersim(std::string("run ") + CS_SOURCE_DIR +
                                         "/scenarios/reference/llmfoundry-a100-80gb-mpt-13b.yaml --quiet --backend " +
                                         backend + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream in(out / "report.json");
    const auto report = nlohmann::json::parse(in);
    std::filesystem::remove_all(out);
    const auto& b = report["breakdown"];
    EXPECT_GT(b["communication_gradient_sync_s"].get<double>(), 0.5) << backend;
    EXPECT_GT(b["hidden_gradient_sync_fraction"].get<double>(), 0.95) << backend;
    EXPECT_LT(b["exposed_communication_s"].get<double>(), 0.01 * report["metrics"]["iteration_time_s"].get<double>())
        << backend;
  }
}
