// Statistics for reports: the nearest-rank percentile every workload's p50/p95/p99 uses, and unions of time intervals.
#pragma once

#include <utility>
#include <vector>

namespace cs {

/** The nearest-rank q-quantile (q in [0, 1]) of `values`; 0 for none. */
double percentile(std::vector<double> values, double q);

using Intervals = std::vector<std::pair<double, double>>;
/** Sorted, merged intervals. */
Intervals union_of(Intervals intervals);
/** Total length of merged intervals. */
double length(const Intervals& merged);
/** Length of the parts of `a` that `b` covers (both merged). */
double overlap(const Intervals& a, const Intervals& b);

} // namespace cs
