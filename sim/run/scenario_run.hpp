// Runs one checked scenario end to end: platform, the workload kind's run, report, trace, summary.
#pragma once

#include "platform/platform_spec.hpp"
#include "sim/scenario/scenario.hpp"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace cs {

struct RunOptions {
  bool trace = false; // also produce the Chrome trace
  // Training: which data-parallel replicas to simulate (ONE is the planner's fast estimate; AUTO decides by size
  // and symmetry, docs/scale.md).
  ReplicaMode replicas = ReplicaMode::AUTO;
  // Changes the platform before the run: traffic beside the workload's own as background load on its links
  // (goodput's asynchronous checkpoint write).
  std::function<void(PlatformSpec&)> adjust_platform;
};

struct RunResult {
  nlohmann::ordered_json report;                          // report.json per DESIGN.md §6
  RunMetrics metrics;                                     // the report's metrics, read by their declarations
  std::string trace_json;                                 // empty unless RunOptions::trace
  std::string summary;                                    // the human-readable summary printed on stdout
  std::vector<std::pair<std::string, std::string>> files; // further outputs by name (e.g. collective.csv)
  std::vector<std::string> warnings;                      // also in report.json's "warnings" when any
};

/** Builds and runs `s` (already passed check_scenario). The simgrid backend may run once per process.
 *  Throws std::runtime_error (or std::logic_error) when the run itself fails. */
RunResult run_scenario(const Scenario& s, const RunOptions& options);

/** The resolved scenario as YAML text (what actually ran, --set overrides applied), written next to the report. */
std::string resolved_yaml(const Scenario& s);

/** "clustersim" version string. */
const char* clustersim_version();

} // namespace cs
