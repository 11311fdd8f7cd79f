#include "sim/report/run_plots.hpp"

#include "sim/report/gnuplot.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <sstream>

namespace cs {
namespace {

constexpr std::size_t kMaxRows = 40;       // timeline rows (streams) drawn; the rest are left out and said so
constexpr std::size_t kMaxEvents = 150000; // timeline boxes drawn, in trace order
constexpr int kBins = 200;                 // utilisation samples over the run

struct Span {
  double start, end;
  int category;
};

std::string terminals(const std::string& name, const std::string& body) { return gnuplot_terminals(name, body); }

// Timeline and utilisation from the Chrome trace's complete ("X") events.
std::string trace_plots(const std::string& trace_json, std::vector<std::string>& files)
{
  const auto trace = nlohmann::json::parse(trace_json, nullptr, false);
  const auto& events = trace.is_object() && trace.contains("traceEvents") ? trace["traceEvents"] : trace;
  if (!events.is_array())
    return "";
  std::map<std::pair<int, int>, std::string> names;
  std::map<std::pair<int, int>, std::vector<Span>> rows;
  std::vector<std::string> categories;
  std::size_t drawn = 0;
  double makespan = 0;
  for (const auto& e : events) {
    if (!e.is_object() || !e.contains("ph"))
      continue;
    const auto key = std::make_pair(e.value("pid", 0), e.value("tid", 0));
    if (e["ph"] == "M" && e.value("name", "") == "thread_name" && e.contains("args"))
      names[key] = e["args"].value("name", "");
    if (e["ph"] != "X" || drawn >= kMaxEvents)
      continue;
    const std::string cat = e.value("cat", "other");
    auto it = std::find(categories.begin(), categories.end(), cat);
    if (it == categories.end())
      it = categories.insert(categories.end(), cat);
    const double start = e.value("ts", 0.0) * 1e-6, end = start + e.value("dur", 0.0) * 1e-6;
    rows[key].push_back({start, end, static_cast<int>(it - categories.begin())});
    makespan = std::max(makespan, end);
    ++drawn;
  }
  if (rows.empty() || makespan <= 0)
    return "";
  std::string gantt = "$gantt << EOD\n", util = "$util << EOD\n";
  std::vector<double> busy(kBins, 0.0);
  const double bin = makespan / kBins;
  std::string ytics;
  // Compute streams first (what a device does), then the communication streams, each in trace order.
  std::vector<std::pair<int, int>> keys;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& [key, spans] : rows)
      if ((names[key].find("compute") != std::string::npos) == (pass == 0))
        keys.push_back(key);
  std::size_t row = 0;
  for (const auto& key : keys) {
    if (row == kMaxRows)
      break;
    const auto& spans = rows[key];
    const std::string label = names[key].empty() ? fmt::format("{}/{}", key.first, key.second) : names[key];
    ytics += fmt::format("{}{} {}", row ? ", " : "", gnuplot_quote(label), row);
    for (const auto& s : spans) {
      gantt +=
          fmt::format("{:.9g} {} {:.9g} 0.4 {}\n", (s.start + s.end) / 2, row, (s.end - s.start) / 2, s.category + 1);
      for (int b = std::max(0, int(s.start / bin)); b < kBins && b * bin < s.end; ++b)
        busy[b] += std::max(0.0, std::min(s.end, (b + 1) * bin) - std::max(s.start, b * bin));
    }
    ++row;
  }
  gantt += "EOD\n";
  for (int b = 0; b < kBins; ++b)
    util += fmt::format("{:.9g} {:.6f}\n", (b + 0.5) * bin, busy[b] / (bin * row));
  util += "EOD\n";
  std::string legend;
  for (std::size_t c = 0; c < categories.size(); ++c)
    legend += fmt::format(", NaN with boxes fs solid lc {} title {}", c + 1, gnuplot_quote(categories[c]));
  const std::string note =
      rows.size() > kMaxRows ? fmt::format(" (first {} of {} streams)", kMaxRows, rows.size()) : "";
  files.insert(files.end(), {"timeline.png", "timeline.svg", "utilization.png", "utilization.svg"});
  return gantt + util +
         terminals(
             "timeline",
             fmt::format(
                 "set title \"Timeline{}\"\nset xlabel \"time (s)\"\nset ytics ({})\n"
                 "set key outside right\nset style fill solid\nset yrange [{}:-1]\nplot $gantt using 1:2:3:4:5 with "
                 "boxxyerror lc variable notitle{}\n",
                 note, ytics, row, legend)) +
         "unset ytics\nset ytics\nset autoscale y\n" +
         terminals("utilization", fmt::format("set title \"Busy share of the {} streams drawn\"\nset xlabel \"time "
                                              "(s)\"\nset yrange [0:1.05]\nset key off\nplot $util using 1:2 with "
                                              "steps lw 2\n",
                                              row));
}

std::string breakdown_plot(const nlohmann::ordered_json& report, std::vector<std::string>& files)
{
  std::vector<std::pair<double, std::string>> entries;
  if (report.contains("breakdown"))
    for (const auto& [k, v] : report["breakdown"].items())
      if (v.is_number() && k.size() > 2 && k.compare(k.size() - 2, 2, "_s") == 0 && v.get<double>() > 0)
        entries.emplace_back(v.get<double>(), k.substr(0, k.size() - 2));
  if (entries.empty())
    return "";
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  entries.resize(std::min<std::size_t>(entries.size(), 16));
  std::string data = "$breakdown << EOD\n";
  for (std::size_t i = 0; i < entries.size(); ++i)
    data += fmt::format("{} {} {:.9g}\n", i, gnuplot_quote(entries[i].second), entries[i].first);
  files.insert(files.end(), {"breakdown.png", "breakdown.svg"});
  return data + "EOD\nunset ytics\nset ytics\nset autoscale\nset xrange [*:*]\nunset xlabel\n" +
         terminals("breakdown",
                   "set title \"Largest times of report.json's breakdown (they overlap: not parts of one whole)\"\n"
                   "set ylabel \"seconds\"\nset xtics rotate by -35\nset key off\nset style fill solid "
                   "0.6\nset boxwidth 0.7\nplot $breakdown using 1:3:xtic(2) with boxes\n");
}

std::string jct_plot(const std::vector<std::pair<std::string, std::string>>& outputs, std::vector<std::string>& files)
{
  // MapReduce's jobs.csv, Spark's apps.csv: both have a jct_s column.
  auto it = std::find_if(outputs.begin(), outputs.end(),
                         [](const auto& f) { return f.first == "jobs.csv" || f.first == "apps.csv"; });
  if (it == outputs.end())
    return "";
  const char* what = it->first == "apps.csv" ? "applications" : "jobs";
  auto split = [](const std::string& line) {
    std::vector<std::string> out;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');)
      out.push_back(f);
    return out;
  };
  std::istringstream in(it->second);
  std::string line;
  std::getline(in, line);
  const auto header = split(line);
  const auto column = std::find(header.begin(), header.end(), "jct_s") - header.begin();
  if (column == static_cast<long>(header.size()))
    return "";
  std::vector<double> jct;
  while (std::getline(in, line))
    if (const auto f = split(line); static_cast<long>(f.size()) > column)
      jct.push_back(std::strtod(f[column].c_str(), nullptr));
  if (jct.empty())
    return "";
  std::sort(jct.begin(), jct.end());
  std::string data = "$jct << EOD\n";
  for (std::size_t i = 0; i < jct.size(); ++i)
    data += fmt::format("{:.9g} {:.6f}\n", jct[i], double(i + 1) / jct.size());
  files.insert(files.end(), {"jct.png", "jct.svg"});
  return data + "EOD\nunset xtics\nset xtics\nset autoscale\n" +
         terminals("jct", fmt::format("set title \"Job completion times ({} {})\"\nset xlabel \"JCT (s)\"\nset "
                                      "ylabel \"share of {}\"\nset logscale x\nset yrange [0:1]\nset key off\nplot "
                                      "$jct using 1:2 with steps lw 2\nunset logscale x\n",
                                      jct.size(), what, what));
}

} // namespace

std::vector<std::pair<std::string, std::string>> run_plots(const RunResult& result)
{
  std::vector<std::string> files;
  std::string script = "set grid\n";
  if (!result.trace_json.empty())
    script += trace_plots(result.trace_json, files);
  script += breakdown_plot(result.report, files);
  script += jct_plot(result.files, files);
  if (files.empty())
    return {};
  return render_gnuplot(script, files);
}

} // namespace cs
