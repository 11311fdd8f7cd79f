// What a cost model answers: a time and where it comes from, never a bare number.
#pragma once

#include <string>

namespace cs {

/** Seconds attributed to each part of one kernel's cost. total is what the task lasts. */
struct CostBreakdown {
  double total = 0;   // seconds
  double compute = 0; // time the FLOPs alone would take at the achievable rate
  double memory = 0;  // time the bytes alone would take at the achievable bandwidth
  double launch = 0;  // fixed launch overhead
  std::string model;  // which model answered, e.g. "roofline"
  bool compute_bound() const { return compute >= memory; }
};

} // namespace cs
