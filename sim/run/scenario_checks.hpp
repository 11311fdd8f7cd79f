// Cross-checks of a parsed scenario against the catalog, the cluster's shape, and its workload kind's own checks.
#pragma once

#include "sim/scenario/scenario.hpp"

namespace cs {

/** Throws InputError at the offending key: unknown device or profile, a cluster the device cannot form, then
 *  whatever the workload kind refuses (parallel groups larger than the cluster, batches that do not divide, ...). */
void check_scenario(const Scenario& s);

/** An InputError positioned at the value of `dotted_path` in the scenario's resolved document (or at its nearest
 *  existing parent). */
InputError scenario_error(const Scenario& s, const std::string& dotted_path, const std::string& message);

} // namespace cs
