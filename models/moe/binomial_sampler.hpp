// Exact binomial draws fast enough for routing thousands of EP ranks: inversion for small means, BTRS otherwise.
#pragma once

#include <cstdint>
#include <random>

namespace cs {

/** A uniform double in [0, 1) from the top 53 bits of one 64-bit draw: the same on every platform, unlike
 *  std::uniform_real_distribution, whose algorithm the standard leaves to the library. */
double unit_uniform(std::mt19937_64& rng);

/** log(k!) for k >= 0: a table below 10, Stirling's series above (error below 1e-10). */
double log_factorial(double k);

/** One draw of Binomial(n, p), n >= 0 and p in [0, 1] (clamped). Exact up to floating point: sequential inversion
 *  when min(p, 1 - p) n < 10, else Hörmann's transformed rejection with squeeze (BTRS; W. Hörmann, "The generation
 *  of binomial random variates", J. Stat. Comput. Simul. 46, 1993), which needs no per-(n, p) table, so a
 *  multinomial drawn as conditional binomials (each with its own n and p) pays a few logarithms a draw. It replaced
 *  std::binomial_distribution, whose set-up per (n, p) was most of a skewed-routing run at 2,048 GPUs. */
long long draw_binomial(std::mt19937_64& rng, long long n, double p);

} // namespace cs
