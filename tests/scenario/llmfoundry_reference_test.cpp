// validation.md §5: MosaicML llm-foundry's FSDP benchmarks (MPT models, ZeRO-3, flash attention) as tokens/s per GPU.
// Every published configuration must fit in its GPU's memory. The fidelity issue asks for each row within +-15% and
// a mean within 8%; today the A100 rows are -5% to +16% (mean 10.5%) and the H100 rows +25% and +32% (see
// docs/validation.md), so this test holds those lines. The 64-GPU MPT-70B row takes a minute and is left to
// bench/validate.sh.
#include "tests/scenario/reference_run.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct Row {
  const char* name;
  int gpus;
  double tokens_per_s_per_gpu; // published
};

// Relative error of the simulated tokens/s per GPU, after checking the configuration fits.
double error_of(const Row& row)
{
  const auto m = cs::testing::reference_metrics(std::string("llmfoundry-") + row.name + ".yaml");
  EXPECT_TRUE(m["fits_in_memory"].get<bool>()) << row.name;
  return m["tokens_per_s"].get<double>() / row.gpus / row.tokens_per_s_per_gpu - 1;
}

} // namespace

TEST(LlmFoundryReference, A100RowsFitAndStayInTheirBand)
{
  const Row rows[] = {{"a100-80gb-mpt-760m", 8, 32434}, {"a100-80gb-mpt-1b", 8, 20513}, {"a100-80gb-mpt-3b", 8, 10811},
                      {"a100-80gb-mpt-7b", 8, 4641},    {"a100-80gb-mpt-13b", 8, 2262}, {"a100-80gb-mpt-30b", 8, 916}};
  double sum = 0;
  for (const Row& row : rows) {
    const double e = error_of(row);
    EXPECT_LT(std::abs(e), 0.18) << row.name << ": " << e * 100 << "%";
    sum += std::abs(e);
  }
  EXPECT_LT(sum / 6, 0.12) << "mean |error| " << sum / 6 * 100 << "%";
}

TEST(LlmFoundryReference, H100RowsFitAndStayInTheirBand)
{
  for (const Row& row : {Row{"h100-mpt-1b", 16, 46037}, Row{"h100-mpt-7b", 8, 10643}}) {
    const double e = error_of(row);
    EXPECT_GT(e, 0) << row.name; // too fast today, by the software stack the profile does not know (validation.md)
    EXPECT_LT(e, 0.35) << row.name << ": " << e * 100 << "%";
  }
}
