#include "models/moe/binomial_sampler.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace cs {

double unit_uniform(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

double log_factorial(double k)
{
  static const std::array<double, 10> table = [] {
    std::array<double, 10> t{};
    for (int i = 1; i < 10; ++i)
      t[i] = t[i - 1] + std::log(double(i));
    return t;
  }();
  if (k < 10)
    return table[static_cast<std::size_t>(k)];
  // log Γ(x) at x = k + 1 by Stirling's series to the x^-5 term: the next term is below 1 / (1680 x^7).
  const double x = k + 1, x2 = x * x;
  return (x - 0.5) * std::log(x) - x + 0.5 * std::log(2 * std::numbers::pi) +
         (1.0 / 12 - (1.0 / 360 - 1.0 / (1260 * x2)) / x2) / x;
}

namespace {

// Walks the probabilities up from 0 (expected steps n p + 1); restarts in the rare case rounding runs it past n.
long long by_inversion(std::mt19937_64& rng, long long n, double p)
{
  const double q = 1 - p, s = p / q, a = (n + 1) * s, start = std::pow(q, double(n));
  for (;;) {
    double u = unit_uniform(rng), r = start;
    for (long long x = 0; x <= n; ++x) {
      if (u < r)
        return x;
      u -= r;
      r *= a / double(x + 1) - s;
    }
  }
}

// BTRS for p <= 1/2 and n p >= 10: a draw k from the transformed-rejection hat, accepted at once inside the squeeze
// (about 86% of draws), else against the binomial's log-probability relative to its mode.
long long by_rejection(std::mt19937_64& rng, long long n, double p)
{
  const double q = 1 - p, spq = std::sqrt(double(n) * p * q);
  const double b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * p, c = double(n) * p + 0.5;
  const double alpha = (2.83 + 5.1 / b) * spq, v_r = 0.92 - 4.2 / b;
  // What only the full acceptance test reads, worked out the first time a draw falls outside the squeeze.
  double log_odds = 0, mode = 0, h = 0;
  bool tested = false;
  for (;;) {
    const double u = unit_uniform(rng) - 0.5, v = unit_uniform(rng), us = 0.5 - std::abs(u);
    const double k = std::floor((2 * a / us + b) * u + c);
    if (k < 0 || k > double(n))
      continue;
    if (us >= 0.07 && v <= v_r)
      return static_cast<long long>(k);
    if (!tested) {
      log_odds = std::log(p / q);
      mode = std::floor(double(n + 1) * p);
      h = log_factorial(mode) + log_factorial(double(n) - mode);
      tested = true;
    }
    const double log_v = std::log(v * alpha / (a / (us * us) + b));
    if (log_v <= h - log_factorial(k) - log_factorial(double(n) - k) + (k - mode) * log_odds)
      return static_cast<long long>(k);
  }
}

} // namespace

long long draw_binomial(std::mt19937_64& rng, long long n, double p)
{
  p = std::clamp(p, 0.0, 1.0);
  if (n <= 0 || p == 0)
    return 0;
  if (p == 1)
    return n;
  if (p > 0.5) // the count of failures, drawn with the smaller probability
    return n - draw_binomial(rng, n, 1 - p);
  return double(n) * p < 10 ? by_inversion(rng, n, p) : by_rejection(rng, n, p);
}

} // namespace cs
