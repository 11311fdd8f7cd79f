// Korthikanti et al. (MLSys'23), Table 5: Megatron-LM of 2022 on A100, each GPT with sequence parallelism and
// selective recomputation and with full recomputation, as iteration times. These are the eight rows Calculon validates
// on (3.65% mean, 8.87% max |error| as its paper states), the anchor the frontier dense issue names: the simulator is
// held to beat it on both. Measured 2026-12-06: 1.9% mean, 5.6% max (docs/validation.md).
#include "tests/scenario/reference_run.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>

namespace {

struct KorthikantiRow {
  const char* scenario;
  double selective_s, full_s; // the paper's iteration times
};

const KorthikantiRow kKorthikantiRows[] = {{"korthikanti-22b.yaml", 1.10, 1.42},
                                           {"korthikanti-175b.yaml", 13.75, 18.13},
                                           {"korthikanti-530b.yaml", 37.83, 49.05},
                                           {"korthikanti-1t.yaml", 71.49, 94.42}};

} // namespace

TEST(KorthikantiReference, IterationTimesBeatCalculonsErrorsAndTheMethodSavesWhatThePaperSays)
{
  const std::string full = " --set workload.model.recompute=full --set workload.parallel.sequence_parallel=false";
  double sum = 0, worst = 0;
  for (const KorthikantiRow& row : kKorthikantiRows) {
    double seconds[2] = {0, 0}; // selective, full
    for (const bool selective : {true, false}) {
      const auto m = cs::testing::reference_metrics(row.scenario, selective ? "" : full);
      EXPECT_TRUE(m["fits_in_memory"].get<bool>()) << row.scenario; // they ran on 80 GB
      seconds[selective ? 0 : 1] = m["iteration_time_s"].get<double>();
      const double error = seconds[selective ? 0 : 1] / (selective ? row.selective_s : row.full_s) - 1;
      EXPECT_LT(std::abs(error), 0.10) << row.scenario << (selective ? " selective " : " full ") << error * 100 << "%";
      sum += std::abs(error);
      worst = std::max(worst, std::abs(error));
    }
    // The paper's headline: its method is 29-32% faster than full recomputation on these models; the simulated
    // speed-up stays within 0.05 of each row's published one.
    EXPECT_NEAR(seconds[1] / seconds[0], row.full_s / row.selective_s, 0.05) << row.scenario;
  }
  EXPECT_LT(sum / 8, 0.0365) << "mean |error| " << sum / 8 * 100 << "%";
  EXPECT_LT(worst, 0.0887) << "max |error| " << worst * 100 << "%";
}
