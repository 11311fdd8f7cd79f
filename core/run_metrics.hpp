// What a run reports: named metrics, flags and a breakdown, ready for report.json (units are in the names).
#pragma once

#include <map>
#include <string>

namespace cs {

/** Ordered name -> value maps for report.json's "metrics" and "breakdown". */
struct RunMetrics {
  std::map<std::string, double> metrics;
  std::map<std::string, bool> flags; // reported as JSON booleans among the metrics (e.g. fits_in_memory)
  std::map<std::string, double> breakdown;
};

} // namespace cs
