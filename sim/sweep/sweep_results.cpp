#include "sim/sweep/sweep_results.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

namespace cs {
namespace {

// Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom; past 30 the normal's 1.96.
double t95(std::size_t df)
{
  static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                 2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  return df == 0 ? 0 : df <= 30 ? table[df - 1] : 1.96;
}

std::string csv_field(const std::string& text)
{
  if (text.find_first_of(",\"\n") == std::string::npos)
    return text;
  std::string out = "\"";
  for (char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

} // namespace

std::string setting_of(const SweepRow& row, const std::string& axis)
{
  for (const auto& [k, v] : row.variant.settings)
    if (k == axis)
      return v;
  return "";
}

double mean_interval95(const std::vector<double>& v, double mean)
{
  if (v.size() < 2)
    return 0;
  double var = 0;
  for (double x : v)
    var += (x - mean) * (x - mean);
  return t95(v.size() - 1) * std::sqrt(var / (v.size() - 1)) / std::sqrt(double(v.size()));
}

nlohmann::ordered_json row_to_json(const SweepRow& row)
{
  nlohmann::ordered_json j;
  j["id"] = row.variant.id;
  j["index"] = row.variant.index;
  j["settings"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : row.variant.settings)
    j["settings"][k] = v;
  j["seed"] = row.variant.seed;
  j["backend"] = row.variant.backend;
  j["overrides"] = row.variant.overrides;
  j["scenario_digest"] = row.variant.scenario_digest;
  j["status"] = row.ok ? "ok" : "failed";
  if (!row.ok)
    j["error"] = row.error;
  j["metrics"] = row.metrics;
  j["wall_time_s"] = row.wall_time_s;
  return j;
}

bool row_from_json(const std::string& line, SweepRow& row)
{
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("status"))
    return false;
  row = SweepRow{};
  row.variant.id = j["id"].get<std::string>();
  row.ok = j["status"] == "ok";
  if (j.contains("error") && j["error"].is_string())
    row.error = j["error"].get<std::string>();
  if (j.contains("settings") && j["settings"].is_object())
    for (const auto& [k, v] : j["settings"].items())
      if (v.is_string())
        row.variant.settings.emplace_back(k, v.get<std::string>());
  if (j.contains("index") && j["index"].is_number_unsigned())
    row.variant.index = j["index"].get<std::size_t>();
  if (j.contains("seed") && j["seed"].is_number_integer())
    row.variant.seed = j["seed"].get<long long>();
  for (auto [key, field] : {std::pair{"backend", &row.variant.backend}, std::pair{"overrides", &row.variant.overrides},
                            std::pair{"scenario_digest", &row.variant.scenario_digest}})
    if (j.contains(key) && j[key].is_string())
      *field = j[key].get<std::string>();
  if (j.contains("metrics") && j["metrics"].is_object())
    for (const auto& [k, v] : j["metrics"].items())
      if (v.is_number())
        row.metrics[k] = v.get<double>();
  if (j.contains("wall_time_s") && j["wall_time_s"].is_number())
    row.wall_time_s = j["wall_time_s"].get<double>();
  return true;
}

void read_report_metrics(const nlohmann::json& report, SweepRow& row)
{
  if (report.contains("metrics") && report["metrics"].is_object())
    for (const auto& [k, v] : report["metrics"].items()) {
      if (v.is_number())
        row.metrics[k] = v.get<double>();
      else if (v.is_boolean())
        row.metrics[k] = v.get<bool>() ? 1.0 : 0.0;
    }
  if (report.contains("wall_time_s") && report["wall_time_s"].is_number())
    row.wall_time_s = report["wall_time_s"].get<double>();
}

std::string results_csv(const std::vector<SweepRow>& rows, const std::vector<std::string>& axes)
{
  std::set<std::string> metrics;
  for (const auto& r : rows)
    for (const auto& [k, v] : r.metrics)
      metrics.insert(k);
  std::string out;
  for (const auto& a : axes)
    out += csv_field(a) + ",";
  out += "seed,status";
  for (const auto& m : metrics)
    out += "," + csv_field(m);
  out += ",backend,overrides,wall_time_s,error\n";
  for (const auto& r : rows) {
    for (const auto& a : axes)
      out += csv_field(setting_of(r, a)) + ",";
    out += fmt::format("{},{}", r.variant.seed, r.ok ? "ok" : "failed");
    for (const auto& m : metrics) {
      auto it = r.metrics.find(m);
      out += it == r.metrics.end() ? "," : fmt::format(",{:.9g}", it->second);
    }
    out += fmt::format(",{},{},{:.3f},{}\n", csv_field(r.variant.backend), csv_field(r.variant.overrides),
                       r.wall_time_s, csv_field(r.error));
  }
  return out;
}

std::string summary_table(const std::vector<SweepRow>& rows, const std::string& by, const std::string& metric)
{
  // Groups in the order their first row appears (the variants' order), not sorted as text.
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, std::set<std::string>> settings; // per group: the other axes' settings it holds
  std::map<std::string, int> failed;
  for (const auto& r : rows) {
    const std::string g = by.empty() ? "(all)" : setting_of(r, by);
    if (!values.count(g) && !failed.count(g))
      order.push_back(g);
    std::string others;
    for (const auto& [k, v] : r.variant.settings)
      if (k != by)
        others += k + "=" + v + ",";
    settings[g].insert(others);
    auto it = r.metrics.find(metric);
    if (r.ok && it != r.metrics.end())
      values[g].push_back(it->second);
    else
      ++failed[g];
  }
  std::string body;
  bool pooled = false;
  for (const auto& g : order) {
    const auto& v = values[g];
    double mean = 0;
    for (double x : v)
      mean += x;
    mean = v.empty() ? 0 : mean / v.size();
    // An interval over seeds only: a group that pools other axes' settings gives their range instead.
    std::string spread = "-";
    if (settings[g].size() > 1 && !v.empty()) {
      pooled = true;
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      spread = fmt::format("{:.4g}..{:.4g}", *lo, *hi);
    } else if (v.size() > 1) {
      spread = fmt::format("± {:.3g}", mean_interval95(v, mean));
    }
    body += fmt::format("  {:<28} {:>5} {:>16.6g} {:>16} {:>7}\n", g, v.size(), mean, spread, failed[g]);
  }
  std::string out = fmt::format("  {:<28} {:>5} {:>16} {:>16} {:>7}\n", by.empty() ? "" : by, "n", metric + " mean",
                                pooled ? "interval / range" : "95% interval", "failed") +
                    body;
  if (pooled)
    out += "  (a group that pools settings of the other axes shows their range, min..max, not an interval over seeds; "
           "plot --by an axis, or sweep one axis, for seed intervals)\n";
  return out;
}

} // namespace cs
