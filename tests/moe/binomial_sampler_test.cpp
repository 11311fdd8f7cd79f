// The routing generators' binomial draws: each regime against the exact distribution, the edges, the log-factorials.
#include "models/moe/binomial_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

double binomial_log_pmf(long long n, double p, long long k)
{
  return std::lgamma(double(n) + 1) - std::lgamma(double(k) + 1) - std::lgamma(double(n - k) + 1) +
         double(k) * std::log(p) + double(n - k) * std::log1p(-p);
}

// Pearson's statistic of `draws` draws against Binomial(n, p), over cells pooled until each expects at least 20, and
// the cells' count; the tails beyond the pooled range form one cell each.
std::pair<double, int> chi_square(long long n, double p, int draws, std::uint64_t seed)
{
  std::mt19937_64 rng(seed);
  std::vector<double> observed(static_cast<std::size_t>(n + 1), 0.0);
  for (int i = 0; i < draws; ++i) {
    const long long k = cs::draw_binomial(rng, n, p);
    EXPECT_GE(k, 0);
    EXPECT_LE(k, n);
    observed[static_cast<std::size_t>(k)] += 1;
  }
  double stat = 0, expected = 0, seen = 0;
  int cells = 0;
  for (long long k = 0; k <= n; ++k) {
    expected += draws * std::exp(binomial_log_pmf(n, p, k));
    seen += observed[static_cast<std::size_t>(k)];
    if (expected >= 20 || k == n) {
      stat += (seen - expected) * (seen - expected) / std::max(expected, 1e-300);
      ++cells;
      expected = seen = 0;
    }
  }
  return {stat, cells};
}

// The chi-square quantile of `dof` degrees of freedom at the upper z-score z (Wilson-Hilferty).
double chi_square_quantile(int dof, double z)
{
  const double d = dof, c = 2.0 / (9.0 * d);
  return d * std::pow(1 - c + z * std::sqrt(c), 3);
}

} // namespace

TEST(BinomialSampler, EachRegimeDrawsTheBinomialDistribution)
{
  // Inversion (n p < 10), both sides of the switch at n p = 10, BTRS with small and even p, a routing-sized draw, and
  // p > 1/2 through the count of failures.
  struct Case {
    long long n;
    double p;
  };
  const Case cases[] = {{20, 0.3},       {1000, 0.004}, {40, 0.2499},  {40, 0.25},     {1000, 0.5},
                        {32768, 0.0039}, {200, 0.05},   {100000, 0.9}, {32768, 0.1637}};
  std::uint64_t seed = 11;
  for (const Case& c : cases) {
    const auto [stat, cells] = chi_square(c.n, c.p, 200000, seed++);
    ASSERT_GE(cells, 5) << c.n << " " << c.p;
    // z = 3.7: one chance in 10,000 that an exact sampler lands above it (the seeds are fixed: it does or does not).
    EXPECT_LT(stat, chi_square_quantile(cells - 1, 3.7)) << "n " << c.n << " p " << c.p << " cells " << cells;
  }
}

TEST(BinomialSampler, MeanAndVarianceOfALargeDraw)
{
  std::mt19937_64 rng(5);
  const long long n = 1000000;
  const double p = 0.3;
  double sum = 0, squares = 0;
  const int draws = 100000;
  for (int i = 0; i < draws; ++i) {
    const double k = double(cs::draw_binomial(rng, n, p));
    sum += k;
    squares += k * k;
  }
  const double mean = sum / draws, variance = squares / draws - mean * mean;
  EXPECT_NEAR(mean, n * p, 4 * std::sqrt(n * p * (1 - p) / draws));
  EXPECT_NEAR(variance / (n * p * (1 - p)), 1.0, 0.02);
}

TEST(BinomialSampler, EdgesAndDeterminism)
{
  std::mt19937_64 rng(1);
  EXPECT_EQ(cs::draw_binomial(rng, 0, 0.5), 0);
  EXPECT_EQ(cs::draw_binomial(rng, 100, 0.0), 0);
  EXPECT_EQ(cs::draw_binomial(rng, 100, 1.0), 100);
  EXPECT_EQ(cs::draw_binomial(rng, 100, 1.5), 100); // clamped
  EXPECT_EQ(cs::draw_binomial(rng, 100, -0.5), 0);
  std::mt19937_64 a(42), b(42);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(cs::draw_binomial(a, 5000 + i, 0.01 * (i % 90 + 1)), cs::draw_binomial(b, 5000 + i, 0.01 * (i % 90 + 1)));
  // The same seed gives the same draws on every platform: the uniforms are the generator's top 53 bits.
  std::mt19937_64 c(7);
  const double u = cs::unit_uniform(c);
  std::mt19937_64 d(7);
  EXPECT_EQ(u, double(d() >> 11) / 9007199254740992.0);
  EXPECT_GE(u, 0.0);
  EXPECT_LT(u, 1.0);
}

TEST(BinomialSampler, LogFactorialMatchesLgamma)
{
  for (double k : {0.0, 1.0, 2.0, 9.0, 10.0, 11.0, 57.0, 1000.0, 32768.0, 1e6, 1e9})
    EXPECT_NEAR(cs::log_factorial(k), std::lgamma(k + 1), 1e-10 * std::max(1.0, std::lgamma(k + 1))) << k;
}
