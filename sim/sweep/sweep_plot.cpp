#include "sim/sweep/sweep_plot.hpp"

#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "sim/report/gnuplot.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>

namespace cs {
namespace {

// One CSV record (RFC 4180 quoting, as results_csv writes it).
std::vector<std::string> csv_record(const std::string& line)
{
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

bool numeric(const std::string& text)
{
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && std::isfinite(v);
}

} // namespace

std::vector<SweepRow> read_results_csv(const std::string& path, std::vector<std::string>& axes)
{
  std::ifstream in = open_input_file(path, "sweep results");
  std::string line;
  if (!std::getline(in, line))
    throw InputError(path, 1, 1, "empty file: not a clustersim sweep results.csv");
  const auto header = csv_record(line);
  const auto seed = std::find(header.begin(), header.end(), "seed");
  if (seed == header.end() || seed + 1 == header.end() || *(seed + 1) != "status" || header.back() != "error")
    throw InputError(path, 1, 1, "not a clustersim sweep results.csv (expected axes, seed, status, ..., error)");
  const std::size_t first_metric = static_cast<std::size_t>(seed - header.begin()) + 2;
  axes.assign(header.begin(), seed);
  std::vector<SweepRow> rows;
  for (int number = 2; std::getline(in, line); ++number) {
    const auto f = csv_record(line);
    if (f.size() != header.size())
      throw InputError(path, number, 1, fmt::format("{} fields, the header has {}", f.size(), header.size()));
    SweepRow r;
    for (std::size_t i = 0; i < axes.size(); ++i)
      r.variant.settings.emplace_back(axes[i], f[i]);
    r.ok = f[axes.size() + 1] == "ok";
    for (std::size_t i = first_metric; i + 2 < header.size(); ++i)
      if (numeric(f[i]))
        r.metrics[header[i]] = std::strtod(f[i].c_str(), nullptr);
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<std::string> pooled_axes(const std::vector<SweepRow>& rows, const PlotRequest& req)
{
  std::vector<std::string> out;
  if (rows.empty())
    return out;
  for (const auto& [axis, first] : rows.front().variant.settings) {
    if (axis == req.x || axis == req.by)
      continue;
    if (std::any_of(rows.begin(), rows.end(), [&](const SweepRow& r) { return setting_of(r, axis) != first; }))
      out.push_back(axis);
  }
  return out;
}

std::string gnuplot_script(const std::vector<SweepRow>& rows, const PlotRequest& req, const std::string& prefix)
{
  auto refuse = [](const std::string& m) { throw InputError("<command line>", 1, 1, m); };
  if (rows.empty())
    refuse("no rows to plot");
  auto has_axis = [&](const std::string& a) {
    return std::any_of(rows.front().variant.settings.begin(), rows.front().variant.settings.end(),
                       [&](const auto& kv) { return kv.first == a; });
  };
  if (!has_axis(req.x))
    refuse("--x " + req.x + ": not an axis of these results");
  if (!req.by.empty() && !has_axis(req.by))
    refuse("--by " + req.by + ": not an axis of these results");
  // Series and x values in the order they first appear (the sweep's order).
  std::vector<std::string> series, xs;
  std::map<std::pair<std::string, std::string>, std::vector<double>> values;
  for (const auto& r : rows) {
    auto it = r.metrics.find(req.y);
    if (!r.ok || it == r.metrics.end())
      continue;
    const std::string s = req.by.empty() ? req.y : setting_of(r, req.by), x = setting_of(r, req.x);
    if (std::find(series.begin(), series.end(), s) == series.end())
      series.push_back(s);
    if (std::find(xs.begin(), xs.end(), x) == xs.end())
      xs.push_back(x);
    values[{s, x}].push_back(it->second);
  }
  if (series.empty())
    refuse("--y " + req.y + ": no successful run reports this metric");
  const bool lines = std::all_of(xs.begin(), xs.end(), numeric);
  const std::vector<std::string> pooled = pooled_axes(rows, req);
  std::string script;
  for (std::size_t si = 0; si < series.size(); ++si) {
    script += fmt::format("$s{} << EOD\n", si);
    for (std::size_t xi = 0; xi < xs.size(); ++xi) {
      auto it = values.find({series[si], xs[xi]});
      if (it == values.end())
        continue;
      double mean = 0;
      for (double v : it->second)
        mean += v;
      mean /= it->second.size();
      // Error bars are 95% intervals over seeds; over other axes' settings they would be no interval at all.
      script += fmt::format("{} {} {:.9g} {:.9g}\n", lines ? xs[xi] : std::to_string(xi), gnuplot_quote(xs[xi]), mean,
                            pooled.empty() ? mean_interval95(it->second, mean) : 0.0);
    }
    script += "EOD\n";
  }
  std::string title = req.title.empty() ? req.y + " by " + req.x : req.title;
  if (!pooled.empty())
    title += " (mean over " + fmt::format("{}", fmt::join(pooled, ", ")) + ")";
  std::string common = fmt::format("set title {}\nset xlabel {}\nset ylabel {}\nset grid\nset key outside right\n"
                                   "set yrange [0:*]\n",
                                   gnuplot_quote(title), gnuplot_quote(req.x), gnuplot_quote(req.y));
  std::string plot = "plot ";
  const double width = 0.8 / series.size();
  for (std::size_t si = 0; si < series.size(); ++si) {
    if (lines)
      plot += fmt::format("$s{0} using 1:3:4 with yerrorlines title {1}", si, gnuplot_quote(series[si]));
    else
      plot += fmt::format("$s{0} using ($1 - 0.4 + {2:.4f} * ({3} + 0.5)):3:4{4} with boxerrorbars title {1}", si,
                          gnuplot_quote(series[si]), width, si, si == 0 ? ":xtic(2)" : ""); // one label per group
    plot += si + 1 < series.size() ? ", " : "\n";
  }
  if (!lines)
    common += fmt::format("set style fill solid 0.6 border -1\nset boxwidth {:.4f}\nset xrange [-0.6:{}]\n", width,
                          xs.size() - 0.4);
  script += "set terminal pngcairo size 900,540 noenhanced\nset output " + gnuplot_quote(prefix + ".png") + "\n" +
            common + plot;
  script += "set terminal svg size 900,540 noenhanced\nset output " + gnuplot_quote(prefix + ".svg") + "\n" + plot;
  return script + "set output\n";
}

} // namespace cs
