// Plots of sweep results with gnuplot: a metric against an axis, one series per value of another axis, with the
// 95% interval over seeds as error bars. Numeric x values give lines, others bars.
#pragma once

#include "sim/sweep/sweep_results.hpp"

#include <string>
#include <vector>

namespace cs {

struct PlotRequest {
  std::string x, y, by; // axis, metric, series axis ("" = one series)
  std::string title;
};

/** The axes other than `x` and `by` whose settings vary across `rows`: each point averages over them. */
std::vector<std::string> pooled_axes(const std::vector<SweepRow>& rows, const PlotRequest& request);

/** The gnuplot data blocks and script for `rows`, writing `<prefix>.png` and `<prefix>.svg`. InputError (at the
 *  command line) when `x`, `y` or `by` is not in the rows or no row succeeded. */
std::string gnuplot_script(const std::vector<SweepRow>& rows, const PlotRequest& request, const std::string& prefix);

/** Rows of a results.csv written by `clustersim sweep` (columns: axes, seed, status, metrics, wall_time_s,
 *  error); InputError at its line for a malformed file. `axes` receives the axis columns. */
std::vector<SweepRow> read_results_csv(const std::string& path, std::vector<std::string>& axes);

} // namespace cs
