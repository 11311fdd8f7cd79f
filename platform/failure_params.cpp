#include "platform/failure_params.hpp"

#include <fmt/format.h>

namespace cs {

void read_failures(ObjectReader& r, FailureParams& f)
{
  std::vector<std::string> names{""};
  for (const auto& c : failure_catalogs())
    names.push_back(c.name);
  r.choice("catalog", f.catalog, names,
           "a shipped failure catalog: llama3-2024 (Table 5 of The Llama 3 Herd of Models, per-unit rates; "
           "docs/goodput.md)")
      .choice("law", f.law, {{"exponential", FailureLaw::EXPONENTIAL}, {"weibull", FailureLaw::WEIBULL}},
              "time between failures of one cause: exponential, or Weibull with weibull_shape")
      .field("weibull_shape", f.weibull_shape, "Weibull shape (below 1: failures cluster in time)")
      .field("detect", f.detect, "from a failure to the job noticing it")
      .field("restart", f.restart,
             "re-initialisation and NCCL set-up after a failure (goodput adds the checkpoint's simulated load)")
      .field("repair", f.repair, "a failed node back in service when no spare is free")
      .field("planned_duration", f.planned_duration, "downtime of a planned interruption");
  // Rates by cause: every cause of the shipped catalogs can be given (failures per unit per hour), replacing or
  // adding to the catalog's.
  ObjectReader rates = r.child("rates", "failures per unit per hour, by cause (replaces the catalog's)");
  const std::vector<FailureCause>& known = known_failure_causes();
  std::vector<double> given(known.size(), 0.0);
  for (std::size_t i = 0; i < known.size(); ++i) {
    const std::string help =
        fmt::format("{} failures per {} per hour (0 = the catalog's)", known[i].name, failure_unit_name(known[i].unit));
    rates.field(known[i].name.c_str(), given[i], help.c_str());
  }
  rates.finish();
  r.finish();
  if (r.describing())
    return;
  if (const FailureCatalog* c = find_failure_catalog(f.catalog))
    f.causes = c->causes;
  for (std::size_t i = 0; i < known.size(); ++i) {
    if (!rates.has(known[i].name.c_str()))
      continue;
    rates.require_positive(known[i].name.c_str(), given[i]);
    rates.require_at_most(known[i].name.c_str(), given[i], 1.0);
    bool found = false;
    for (auto& c : f.causes)
      if (c.name == known[i].name) {
        c.per_unit_hour = given[i];
        found = true;
      }
    if (!found) {
      FailureCause c = known[i];
      c.per_unit_hour = given[i];
      f.causes.push_back(c);
    }
  }
  r.require(f.weibull_shape > 0.1 && f.weibull_shape <= 10, "weibull_shape", "weibull_shape must be in (0.1, 10]");
  const std::pair<const char*, double> times[] = {{"detect", f.detect.value},
                                                  {"restart", f.restart.value},
                                                  {"repair", f.repair.value},
                                                  {"planned_duration", f.planned_duration.value}};
  for (const auto& [key, seconds] : times) {
    r.require_non_negative(key, seconds);
    r.require_at_most(key, seconds, 30 * 86400.0);
  }
}

} // namespace cs
