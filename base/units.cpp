#include "base/units.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <map>

namespace cs::units {
namespace {

struct Split {
  double number = 0;
  std::string unit;
};

// Splits "1.5 GiB" into 1.5 and "GiB"; rejects empty, non-finite and trailing junk in the number part.
std::optional<Split> split_number(const std::string& text, std::string* error)
{
  const char* begin = text.c_str();
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  // strtod also reads hexadecimal (0x10 = 16) and hexadecimal floats: a size is written in decimal.
  const bool decimal = std::all_of(begin, static_cast<const char*>(end), [](char ch) {
    return std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' ||
           ch == '-' || ch == ' ' || ch == '\t';
  });
  if (end == begin || !std::isfinite(value) || !decimal) {
    if (error)
      *error = "expected a number with a unit, got '" + text + "'";
    return std::nullopt;
  }
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(" \t"));
  unit.erase(unit.find_last_not_of(" \t") + 1);
  return Split{value, unit};
}

std::optional<double> lookup(const std::map<std::string, double>& table, const Split& s, const std::string& text,
                             const char* what, std::string* error)
{
  auto it = table.find(s.unit);
  if (it == table.end()) {
    if (error) {
      std::string units;
      for (const auto& [name, factor] : table)
        if (!name.empty())
          units += (units.empty() ? "" : ", ") + name;
      *error = fmt::format("'{}' is not a {}: unknown unit '{}' (expected one of {})", text, what, s.unit, units);
    }
    return std::nullopt;
  }
  return s.number * it->second;
}

// Refuses values beyond `limit` (in magnitude) after the unit's multiplier: 1e308GiB is not a size.
std::optional<double> bounded(std::optional<double> v, double limit, const std::string& text, const char* what,
                              const char* limit_text, std::string* error)
{
  if (v && !(std::fabs(*v) <= limit)) {
    if (error)
      *error = fmt::format("'{}' is beyond the largest {} clustersim accepts ({})", text, what, limit_text);
    return std::nullopt;
  }
  return v;
}

const std::map<std::string, double>& byte_units()
{
  static const std::map<std::string, double> table = {
      {"", 1.0},    {"B", 1.0},      {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
      {"TB", 1e12}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  return table;
}

} // namespace

std::optional<double> parse_bytes(const std::string& text, std::string* error)
{
  auto s = split_number(text, error);
  if (!s)
    return std::nullopt;
  return bounded(lookup(byte_units(), *s, text, "size", error), kMaxBytes, text, "size", "1 EiB", error);
}

std::optional<double> parse_rate(const std::string& text, std::string* error)
{
  auto s = split_number(text, error);
  if (!s)
    return std::nullopt;
  std::string unit = s->unit;
  // "25Gbps" -> "25Gb/s"; "B/s" and "b/s" keep their meaning (bytes vs bits).
  if (unit.size() > 2 && unit.compare(unit.size() - 2, 2, "ps") == 0)
    unit = unit.substr(0, unit.size() - 2) + "/s";
  if (unit.size() < 3 || unit.compare(unit.size() - 2, 2, "/s") != 0) {
    if (error)
      *error = "'" + text + "' is not a rate: expected a unit such as B/s, GB/s, Gb/s or GiB/s";
    return std::nullopt;
  }
  std::string base = unit.substr(0, unit.size() - 2);
  double factor = 1.0;
  if (base.back() == 'b') { // bits
    factor = 1.0 / 8.0;
    base.back() = 'B';
    if (base.size() >= 2 && base.compare(base.size() - 2, 2, "iB") == 0) {
      if (error)
        *error = "'" + text + "' mixes binary prefixes with bits; write Gb/s or GiB/s";
      return std::nullopt;
    }
  }
  auto bytes = lookup(byte_units(), Split{s->number, base}, text, "rate", error);
  if (!bytes)
    return std::nullopt;
  return bounded(*bytes * factor, kMaxRate, text, "rate", "1 PB/s", error);
}

std::optional<double> parse_time(const std::string& text, std::string* error)
{
  static const std::map<std::string, double> table = {{"", 1.0},    {"s", 1.0},   {"ms", 1e-3},  {"us", 1e-6},
                                                      {"µs", 1e-6}, {"ns", 1e-9}, {"min", 60.0}, {"h", 3600.0}};
  auto s = split_number(text, error);
  if (!s)
    return std::nullopt;
  return bounded(lookup(table, *s, text, "time", error), kMaxSeconds, text, "time", "1e9 s, about 32 years", error);
}

std::string format_bytes(double bytes)
{
  const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024.0 && i < 5) {
    bytes /= 1024.0;
    ++i;
  }
  return fmt::format("{:.3g} {}", bytes, names[i]);
}

std::string format_time(double seconds)
{
  double a = std::fabs(seconds);
  if (a == 0)
    return "0 s";
  if (a < 1e-6)
    return fmt::format("{:.3g} ns", seconds * 1e9);
  if (a < 1e-3)
    return fmt::format("{:.3g} us", seconds * 1e6);
  if (a < 1.0)
    return fmt::format("{:.4g} ms", seconds * 1e3);
  if (a < 1e4)
    return fmt::format("{:.4g} s", seconds);
  if (a < 2 * 86400.0) // long runs and queues read better in hours and days than as 3.264e+05 s
    return fmt::format("{:.4g} h", seconds / 3600);
  return fmt::format("{:.4g} days", seconds / 86400);
}

std::string format_rate(double bytes_per_second) { return fmt::format("{:.4g} GB/s", bytes_per_second / 1e9); }

std::string format_count(double value)
{
  if (!std::isfinite(value) || std::fabs(value) >= 1e15)
    return fmt::format("{:.4g}", value);
  const std::string digits = fmt::format("{:.0f}", std::fabs(value));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return (value < 0 && digits != "0" ? "-" : "") + out;
}

std::string format_money(double usd)
{
  if (std::isfinite(usd) && std::fabs(usd) < 100)
    return fmt::format("{}${:.2f}", usd < 0 ? "-" : "", std::fabs(usd));
  return (usd < 0 ? "-$" : "$") + format_count(std::fabs(usd));
}

} // namespace cs::units
