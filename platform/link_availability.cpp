#include "platform/link_availability.hpp"
#include "base/input_file.hpp"

#include "base/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace cs {

namespace {
// Position inside the period, robust to rounding at period boundaries (t = 2 ms with a 2 ms period is 0, not 2 ms).
double cycle_start(double t, double period) { return std::floor(t / period + 1e-9) * period; }
} // namespace

double LinkAvailability::at(double t) const
{
  if (period > 0)
    t = std::max(0.0, t - cycle_start(t, period));
  const double tolerance = 1e-12 * std::max(1.0, period);
  double value = points.front().second;
  for (const auto& [time, v] : points) {
    if (time > t + tolerance)
      break;
    value = v;
  }
  return value;
}

double LinkAvailability::next_change(double t) const
{
  double base = 0, local = t;
  if (period > 0) {
    base = cycle_start(t, period);
    local = std::max(0.0, t - base);
  }
  for (const auto& [time, v] : points)
    if (time > local + 1e-12 * std::max(1.0, period))
      return base + time;
  return period > 0 ? base + period : std::numeric_limits<double>::infinity();
}

LinkAvailability product(const LinkAvailability& a, const LinkAvailability& b)
{
  LinkAvailability out;
  out.points.clear();
  if (a.period == b.period) { // one cycle (or the whole schedule) holds every change of both
    std::vector<double> times;
    for (const auto* x : {&a, &b})
      for (const auto& point : x->points)
        times.push_back(point.first);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    for (double t : times)
      out.points.emplace_back(t, a.at(t) * b.at(t));
    out.period = a.period;
    return out;
  }
  double t = 0;
  for (int event = 0; event < 10000 && std::isfinite(t); ++event) {
    out.points.emplace_back(t, a.at(t) * b.at(t));
    t = std::min(a.next_change(t), b.next_change(t));
  }
  return out;
}

LinkAvailability availability_from_csv(const std::string& path, double period)
{
  std::ifstream in = open_input_file(path, "background traffic file");
  LinkAvailability a;
  a.points.clear();
  std::string line;
  int row = 0;
  while (std::getline(in, line)) {
    ++row;
    if (line.empty() || line[0] == '#')
      continue;
    auto comma = line.find(',');
    if (comma == std::string::npos)
      throw InputError(path, row, 1, "expected 'time_s,load'");
    auto number = [&](const std::string& text, int column, const char* what) {
      try {
        std::size_t used = 0;
        double v = std::stod(text, &used);
        if (text.find_first_not_of(" \t\r", used) != std::string::npos || !std::isfinite(v))
          throw std::invalid_argument(text);
        return v;
      } catch (const std::exception&) {
        throw InputError(path, row, column, std::string("expected a number for ") + what + ", got '" + text + "'");
      }
    };
    std::string first = line.substr(0, comma), second = line.substr(comma + 1);
    if (row == 1 && first.find_first_of("0123456789") == std::string::npos)
      continue; // header
    double t = number(first, 1, "time_s");
    double load = number(second, static_cast<int>(comma) + 2, "load");
    if (t < 0 || (!a.points.empty() && t <= a.points.back().first))
      throw InputError(path, row, 1, "times must start at 0 or later and increase");
    if (load < 0 || load >= 1)
      throw InputError(path, row, static_cast<int>(comma) + 2, "load must be in [0, 1)");
    a.points.emplace_back(t, 1.0 - load);
  }
  if (a.points.empty())
    throw InputError(path, row, 1, "no rows");
  if (a.points.front().first > 0)
    a.points.insert(a.points.begin(), {0.0, 1.0});
  if (period > 0 && period <= a.points.back().first)
    throw InputError(path, row, 1, "period must be longer than the last time in the file");
  a.period = period;
  return a;
}

} // namespace cs
