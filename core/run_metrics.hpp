// What a run reports: declared metrics (core/metric.hpp) and an open breakdown, ready for report.json.
#pragma once

#include "core/metric.hpp"

#include <map>
#include <string>

namespace cs {

/** A run's metric values, keyed by their declarations, plus the breakdown: named parts whose names are made at run
 *  time (per stage, per tier, per layer), so they are not declared one by one. */
class RunMetrics {
public:
  /** Sets a declared metric; a FLAG metric takes set_flag. */
  void set(const Metric& metric, double value);
  void set_flag(const Metric& metric, bool value);
  /** The value set for `metric`; std::logic_error when the run did not set it. */
  double at(const Metric& metric) const;
  bool flag(const Metric& metric) const;
  bool contains(const Metric& metric) const;

  /** The numbers and the flags by name, in report.json's order (numbers first, each sorted by name). */
  const std::map<std::string, double>& values() const { return values_; }
  const std::map<std::string, bool>& flags() const { return flags_; }

  std::map<std::string, double> breakdown;

private:
  std::map<std::string, double> values_;
  std::map<std::string, bool> flags_;
};

} // namespace cs
