#include "core/run_metrics.hpp"

#include <stdexcept>

namespace cs {

void RunMetrics::set(const Metric& metric, double value)
{
  if (metric.unit == MetricUnit::FLAG)
    throw std::logic_error("metric " + std::string(metric.name) + " is a flag: set it with set_flag");
  values_[std::string(metric.name)] = value;
}

void RunMetrics::set_flag(const Metric& metric, bool value)
{
  if (metric.unit != MetricUnit::FLAG)
    throw std::logic_error("metric " + std::string(metric.name) + " is a number: set it with set");
  flags_[std::string(metric.name)] = value;
}

double RunMetrics::at(const Metric& metric) const
{
  const auto it = values_.find(std::string(metric.name));
  if (it == values_.end())
    throw std::logic_error("metric " + std::string(metric.name) + " was not set by this run");
  return it->second;
}

bool RunMetrics::flag(const Metric& metric) const
{
  const auto it = flags_.find(std::string(metric.name));
  if (it == flags_.end())
    throw std::logic_error("flag " + std::string(metric.name) + " was not set by this run");
  return it->second;
}

bool RunMetrics::contains(const Metric& metric) const
{
  return values_.count(std::string(metric.name)) > 0 || flags_.count(std::string(metric.name)) > 0;
}

} // namespace cs
