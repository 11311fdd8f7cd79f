// Cross-checks of a parsed scenario against the catalog, the registries and the cluster's shape.
#pragma once

#include "sim/scenario/scenario.hpp"

namespace cs {

/** Throws InputError at the offending key: unknown device or policy, a parallel group larger than the cluster,
 *  batches that do not divide, shapes the builders do not support yet. */
void check_scenario(const Scenario& s);

/** The pipeline schedule a scenario runs: policies.pipeline, else 1f1b (interleaved-1f1b when vpp > 1). */
std::string pipeline_schedule_name(const Scenario& s);

/** An InputError positioned at the value of `dotted_path` in the scenario's resolved document (or at its nearest
 *  existing parent). */
InputError scenario_error(const Scenario& s, const std::string& dotted_path, const std::string& message);

} // namespace cs
