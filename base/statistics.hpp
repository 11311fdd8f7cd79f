// Order statistics for reports: the nearest-rank percentile every workload's p50/p95/p99 uses.
#pragma once

#include <vector>

namespace cs {

/** The nearest-rank q-quantile (q in [0, 1]) of `values`; 0 for none. */
double percentile(std::vector<double> values, double q);

} // namespace cs
