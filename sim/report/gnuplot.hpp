// Renders gnuplot scripts (gnuplot-nox, run as a child process): the one place clustersim draws pictures.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cs {

/** Runs `script` with `{DIR}` replaced by a fresh staging folder and returns the named files it wrote there (name,
 *  bytes). Throws std::runtime_error when gnuplot is missing or fails, or a file in `expected` is not written. */
std::vector<std::pair<std::string, std::string>> render_gnuplot(const std::string& script,
                                                                const std::vector<std::string>& expected);

/** `body` drawn twice, as {DIR}/name.png and {DIR}/name.svg (1000 x 600). */
std::string gnuplot_terminals(const std::string& name, const std::string& body);

/** A quoted gnuplot string. */
std::string gnuplot_quote(const std::string& text);

/** "set logscale x|y|xy\n" for the axes whose values are all positive and span more than tenfold, "" for none: a
 *  log axis over a narrow range squeezes every point into a corner. */
std::string gnuplot_log_axes(const std::vector<double>& x, const std::vector<double>& y);

} // namespace cs
