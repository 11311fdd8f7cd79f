#include "core/metric.hpp"

#include <map>
#include <memory>
#include <stdexcept>

namespace cs {
namespace {

// Metrics are declared during static initialisation, in whatever order the linker gives: a function-local catalog
// exists before the first declaration, and node-based storage keeps every returned reference valid.
std::map<std::string, std::unique_ptr<Metric>, std::less<>>& catalog()
{
  static std::map<std::string, std::unique_ptr<Metric>, std::less<>> metrics;
  return metrics;
}

} // namespace

std::string_view unit_symbol(MetricUnit unit)
{
  switch (unit) {
  case MetricUnit::SECONDS:
    return "s";
  case MetricUnit::BYTES:
    return "B";
  case MetricUnit::COUNT:
    return "count";
  case MetricUnit::FRACTION:
    return "fraction";
  case MetricUnit::RATIO:
    return "ratio";
  case MetricUnit::PER_SECOND:
    return "/s";
  case MetricUnit::TFLOPS:
    return "TFLOP/s";
  case MetricUnit::GBPS:
    return "GB/s";
  case MetricUnit::COST:
    return "cost";
  case MetricUnit::FLAG:
    return "true/false";
  }
  return "?";
}

const Metric& declare_metric(std::string_view name, MetricUnit unit, std::string_view description)
{
  auto& metrics = catalog();
  if (metrics.count(name))
    throw std::logic_error("metric declared twice: " + std::string(name));
  auto stored = std::make_unique<Metric>(Metric{name, unit, description});
  const Metric& out = *stored;
  metrics.emplace(std::string(name), std::move(stored));
  return out;
}

std::vector<const Metric*> metric_catalog()
{
  std::vector<const Metric*> out;
  for (const auto& [name, metric] : catalog())
    out.push_back(metric.get());
  return out;
}

const Metric* find_metric(std::string_view name)
{
  const auto& metrics = catalog();
  const auto it = metrics.find(name);
  return it == metrics.end() ? nullptr : it->second.get();
}

} // namespace cs
