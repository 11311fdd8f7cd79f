// What a cost model answers: a time and where it comes from, never a bare number.
#pragma once

#include <string>

namespace cs {

/** Seconds attributed to each part of one kernel's cost. total is what the task lasts. */
struct CostBreakdown {
  double total = 0;   // seconds
  double compute = 0; // time the FLOPs (padded to whole waves, for GEMMs) take at the achievable rate
  double memory = 0;  // time the bytes take at the achievable bandwidth
  double launch = 0;  // fixed launch overhead
  std::string model;  // which model answered: roofline, gemm-waves, profiled
  std::string detail; // e.g. "tile 256x128, 98 tiles, 1 wave"
  bool compute_bound() const { return compute >= memory; }
};

} // namespace cs
