// Run metrics declared once, each with its name, unit and meaning (gem5's ADD_STAT is the model): report.json,
// the summaries, `clustersim list metrics` and the sweep's columns all read these declarations.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cs {

/** What a metric's number counts; the name's suffix says the same (_s, _bytes, _fraction) for readers of JSON. */
enum class MetricUnit {
  SECONDS,
  BYTES,
  COUNT,      // a count of things, or a mean count
  FRACTION,   // a share in [0, 1]
  RATIO,      // a dimensionless ratio that may pass 1 (slowdown, imbalance, relative error)
  PER_SECOND, // things per second (samples, tokens, updates)
  TFLOPS,     // 10^12 floating-point operations per second
  GBPS,       // 10^9 bytes per second
  COST,       // a weighted sum in the policy's own units (traffic cost)
  FLAG,       // true or false
};

/** The unit as a reader sees it in `list metrics` and sweep summaries: "s", "B", "1", "/s", "TFLOP/s". */
std::string_view unit_symbol(MetricUnit unit);

/** One declared metric: its key in report.json, its unit, and what it measures. */
struct Metric {
  std::string_view name;
  MetricUnit unit;
  std::string_view description;
};

/** Adds a metric to the catalog and returns the catalog's copy; a name declared twice is a programming error
 *  (std::logic_error at start-up). Use CS_METRIC. */
const Metric& declare_metric(std::string_view name, MetricUnit unit, std::string_view description);

/** Every declared metric, by name. */
std::vector<const Metric*> metric_catalog();

/** The declared metric of that name, or nullptr. */
const Metric* find_metric(std::string_view name);

} // namespace cs

/** Declares metric `id` (its report.json key is the identifier itself) in the enclosing namespace; put declarations
 *  in a header under namespace cs::metric so that writers and readers name the same object. */
#define CS_METRIC(id, unit, description)                                                                               \
  inline const ::cs::Metric& id = ::cs::declare_metric(#id, ::cs::MetricUnit::unit, description)
