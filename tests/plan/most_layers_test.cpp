#include "sim/plan/most_layers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

TEST(MostLayers, AgreesWithACountAtATimeInFewerEvaluations)
{
  // Memory that grows with the layers, nearly in proportion (a constant, a slope, the steps an MoE layer count's
  // ceiling makes), against budgets from below one layer to above every layer: the answer is the largest count that
  // fits, as counting up one layer at a time finds it, and it takes at most a bisection's evaluations.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int checked = 0, asked = 0;
  long total = 0, bisections = 0; // evaluations in all, and what a bisection of [0, hi] would have made
  for (int trial = 0; trial < 2000; ++trial) {
    const int hi = 1 + static_cast<int>(u(rng) * 80);
    const double base = 10 * u(rng), slope = 0.1 + 3 * u(rng), step = u(rng) < 0.5 ? 0.0 : 2 * u(rng);
    const int every = 2 + static_cast<int>(u(rng) * 4);
    auto memory = [&](int l) {
      ++asked;
      return base + slope * l + step * std::ceil(double(l) / every);
    };
    const double budget = base + (slope + step) * hi * (1.3 * u(rng) - 0.1);
    int expected = 0;
    for (int l = 1; l <= hi; ++l)
      if (base + slope * l + step * std::ceil(double(l) / every) <= budget)
        expected = l;
    asked = 0;
    ASSERT_EQ(cs::most_layers_within(hi, budget, memory), expected) << trial;
    EXPECT_LE(asked, 3 + static_cast<int>(std::ceil(std::log2(hi + 1)))) << trial;
    total += asked;
    bisections += static_cast<long>(std::ceil(std::log2(hi + 1)));
    ++checked;
  }
  EXPECT_EQ(checked, 2000);
  EXPECT_LT(total, 0.75 * bisections) << total << " against " << bisections;
  // No layers to place, and memory(0) never asked.
  EXPECT_EQ(cs::most_layers_within(0, 1.0, [](int l) { return l == 0 ? throw 1 : 0.0; }), 0);
}
