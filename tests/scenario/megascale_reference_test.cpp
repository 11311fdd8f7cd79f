// validation.md §6: MegaScale's Table 2 (Jiang et al., NSDI'24), the Megatron-LM baseline's strong scaling of a 175B
// GPT on 256 to 12,288 A100 as iteration times, from one scenario whose unstated settings are derived from the paper,
// the Megatron-LM commit it names and memory, not fitted (scenarios/reference/megascale-175b.yaml). Each row within
// the frontier dense issue's +-10% and the mean within 5%. Measured 2026-12-06: 4.7% mean, -8.8% worst.
#include "tests/scenario/reference_run.hpp"

#include <cmath>
#include <fmt/format.h>
#include <gtest/gtest.h>

namespace {

struct MegaScaleRow {
  int nodes, batch;
  double seconds; // published
};

const MegaScaleRow kMegaScaleRows[] = {{32, 768, 40.0},    {64, 768, 21.2},    {96, 768, 15.2},
                                       {128, 768, 11.9},   {384, 6144, 29.02}, {768, 6144, 14.78},
                                       {1024, 6144, 12.24}, {1536, 6144, 8.57}};

} // namespace

TEST(MegaScaleReference, MegatronLmBaselineIterationTimesOfTable2)
{
  double sum = 0;
  for (const MegaScaleRow& row : kMegaScaleRows) {
    const auto m = cs::testing::reference_metrics(
        "megascale-175b.yaml",
        fmt::format(" --set cluster.nodes={} --set workload.batch.global={}", row.nodes, row.batch));
    EXPECT_TRUE(m["fits_in_memory"].get<bool>()) << row.nodes; // it ran on 80 GB
    const double error = m["iteration_time_s"].get<double>() / row.seconds - 1;
    EXPECT_LT(std::abs(error), 0.10) << row.nodes * 8 << " GPUs: " << error * 100 << "%";
    sum += std::abs(error);
  }
  EXPECT_LT(sum / std::size(kMegaScaleRows), 0.05) << "mean |error| " << sum / std::size(kMegaScaleRows) * 100 << "%";
}
