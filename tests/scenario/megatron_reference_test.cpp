// validation.md §3: Megatron-LM's Table 1 (Narayanan et al., SC'21) as iteration times. The paper's rate counts the
// recomputed forward pass (96 B s l h^2 ...), so the published iteration time is that count over GPUs x rate. Each
// row within +-10% and the mean |error| within 5% (the fidelity issue's targets; 2.9% over the table's ten rows
// today, docs/validation.md).
#include "tests/scenario/reference_run.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct Row {
  const char* scenario;
  double batch, seq, layers, hidden, vocab, gpus, tflops; // the table's row
};

// Published iteration time: the paper's FLOP count with recomputation over the GPUs' published rate.
double published_seconds(const Row& r)
{
  const double flops = 96 * r.batch * r.seq * r.layers * r.hidden * r.hidden *
                       (1 + r.seq / (6 * r.hidden) + r.vocab / (16 * r.layers * r.hidden));
  return flops / (r.gpus * r.tflops * 1e12);
}

const Row kRows[] = {{"megatron-1.7b.yaml", 512, 2048, 24, 2304, 51200, 32, 137},
                     {"megatron-7.5b.yaml", 512, 2048, 36, 4096, 51200, 128, 142},
                     {"megatron-39.1b.yaml", 1536, 2048, 48, 8192, 51200, 512, 138},
                     {"megatron-145.6b.yaml", 2304, 2048, 80, 12288, 51200, 1536, 148},
                     {"megatron-529.6b.yaml", 2520, 2048, 105, 20480, 51200, 2520, 163},
                     // The table's other five rows (the paper's; shared/reference lists the five above).
                     {"megatron-3.6b.yaml", 512, 2048, 30, 3072, 51200, 64, 138},
                     {"megatron-18.4b.yaml", 1024, 2048, 40, 6144, 51200, 256, 135},
                     {"megatron-76.1b.yaml", 1792, 2048, 60, 10240, 51200, 1024, 140},
                     {"megatron-310.1b.yaml", 2160, 2048, 96, 16384, 51200, 1920, 155},
                     {"megatron-1t.yaml", 3072, 2048, 128, 25600, 51200, 3072, 163}};

} // namespace

TEST(MegatronReference, PublishedIterationTimesAreTheOnesValidationMdStates)
{
  const double stated[] = {3.53, 3.70, 14.45, 24.82, 54.08, 3.70, 9.40, 16.06, 37.61, 102.63};
  for (std::size_t i = 0; i < std::size(kRows); ++i)
    EXPECT_NEAR(published_seconds(kRows[i]), stated[i], 0.006) << kRows[i].scenario;
}

TEST(MegatronReference, IterationTimesOfTable1)
{
  double sum = 0;
  for (const Row& row : kRows) {
    const auto m = cs::testing::reference_metrics(row.scenario);
    const double error = m["iteration_time_s"].get<double>() / published_seconds(row) - 1;
    EXPECT_LT(std::abs(error), 0.10) << row.scenario << ": " << error * 100 << "%";
    sum += std::abs(error);
    // The report's two rates: model FLOPs (72, Megatron's count without recomputation) and hardware FLOPs (96 with
    // full recomputation), both over the same iteration.
    EXPECT_NEAR(m["hardware_tflops_per_gpu"].get<double>() / m["tflops_per_gpu"].get<double>(), 4.0 / 3.0, 1e-9);
  }
  const double mean = sum / std::size(kRows);
  EXPECT_LT(mean, 0.05) << "mean |error| " << mean * 100 << "%";
}
