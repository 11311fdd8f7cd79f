// What a cluster's failures, spares and checkpoint storage are (`cluster.failures`, `cluster.spares`,
// `cluster.storage`), read here; the long run that uses them is sim/goodput.
#pragma once

#include "base/yaml_reader.hpp"
#include "platform/failure_catalog.hpp"

#include <string>
#include <vector>

namespace cs {

/** How the time between two failures of one cause is drawn. */
enum class FailureLaw { EXPONENTIAL, WEIBULL };

struct FailureParams {
  std::string catalog;              // a shipped catalog (failure_catalogs()); "" = none
  std::vector<FailureCause> causes; // the catalog's causes, with the rates given under `rates` replacing theirs
  FailureLaw law = FailureLaw::EXPONENTIAL;
  double weibull_shape = 0.78;    // below 1: failures cluster (infant mortality; Schroeder and Gibson's HPC fits)
  Seconds detect{300};            // from a failure to the job knowing it (watchdogs, health checks)
  Seconds restart{600};           // re-initialise, set up NCCL (goodput adds the checkpoint load it simulates)
  Seconds repair{4 * 3600};       // a lost node back in service when no spare is free
  Seconds planned_duration{1800}; // a planned interruption's downtime
  bool enabled() const { return !causes.empty(); }
};

struct StorageParams {
  Rate bandwidth; // checkpoint storage, shared by every writer (0 = none: checkpoints need it)
};

/** Reads `failures:` (a catalog and/or rates by cause, the law, detection, restart and repair times). */
void read_failures(ObjectReader& r, FailureParams& failures);

} // namespace cs
