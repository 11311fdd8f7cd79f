// Failure catalogs: published interruption counts turned into per-unit rates, each with its source and arithmetic.
#pragma once

#include <string>
#include <vector>

namespace cs {

/** What a component's rate is counted per: a GPU, a host (node), a NIC, the fabric (per GPU it serves), the job. */
enum class FailureUnit { GPU, HOST, NIC, FABRIC, JOB };

/** One cause of interruption and how often it strikes one unit. */
struct FailureCause {
  std::string name;     // e.g. "gpu", "hbm", "software"
  FailureUnit unit;     // what the rate is counted per
  double per_unit_hour; // failures per unit per hour
  bool hardware = true; // a unit must be replaced (a spare or a repair); software and planned ones restart in place
  bool planned = false; // scheduled maintenance, not a failure
  std::string note;     // the source's count and category
};

/** A named catalog: its causes and where the numbers come from. */
struct FailureCatalog {
  std::string name;
  std::string source;
  std::vector<FailureCause> causes;
};

/** The catalogs clustersim ships (llama3-2024: Table 5 of "The Llama 3 Herd of Models"). */
const std::vector<FailureCatalog>& failure_catalogs();
/** The catalog of that name, or nullptr. */
const FailureCatalog* find_failure_catalog(const std::string& name);
/** Every cause some shipped catalog names, each once (the first catalog's rate): what `failures.rates` may set. */
const std::vector<FailureCause>& known_failure_causes();
/** "gpu" | "host" | "nic" | "fabric" | "job". */
const char* failure_unit_name(FailureUnit unit);

} // namespace cs
