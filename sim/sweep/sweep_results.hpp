// A sweep's results: one row per variant (its settings, seed, status and every metric), as JSON lines and CSV, and
// a summary grouped by an axis with the mean and 95% interval over seeds.
#pragma once

#include "sim/sweep/sweep_spec.hpp"

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cs {

struct SweepRow {
  SweepVariant variant;
  bool ok = false;
  std::string error;                     // the run's one-line error when it failed
  std::map<std::string, double> metrics; // report.json's numeric metrics (flags as 0/1)
  double wall_time_s = 0;
};

/** The row's value of sweep axis `axis` ("" when the variant does not set it). */
std::string setting_of(const SweepRow& row, const std::string& axis);

nlohmann::ordered_json row_to_json(const SweepRow& row);
/** Reads one results.jsonl line; nullopt-like: returns false for a line that is not a row (a truncated last line). */
bool row_from_json(const std::string& line, SweepRow& row);
/** The rows' metrics from a run's report.json. */
void read_report_metrics(const nlohmann::json& report, SweepRow& row);

/** Half-width of the 95% interval of the mean of `values` (Student's t with n - 1 degrees of freedom; 1.96 past
 *  30; 0 for fewer than two values). */
double mean_interval95(const std::vector<double>& values, double mean);

/** CSV: one column per axis, then seed, status, every metric (sorted by name), wall_time_s and error. */
std::string results_csv(const std::vector<SweepRow>& rows, const std::vector<std::string>& axes);
/** Rows grouped by the value of axis `by` ("" = one group) with n, mean and the 95% interval of `metric` over the
 *  rows that succeeded (Student's t for small n). */
std::string summary_table(const std::vector<SweepRow>& rows, const std::string& by, const std::string& metric);

} // namespace cs
