// The scenario's own parallel plan set beside the planner's best: timed alike, and placed in the search or not.
#pragma once

#include "sim/plan/planner.hpp"
#include "sim/scenario/scenario.hpp"

#include <string>

namespace cs {

/** What `plan` says of the configuration a scenario already runs, when it runs on the GPUs planned for. */
struct OwnPlan {
  Plan plan;               // its layout, micro-batch, schedule, recomputation and FP8 (stage_layers as written)
  double iteration_s = 0;  // timed as the planner times its candidates
  double memory_bytes = 0; // the run's peak per GPU
  bool searched = false;   // the tree holds its layout, micro-batch, schedule, recomputation, ZeRO and FP8
  std::string outside;     // why the search may pass it by: not in the tree, over the budget, or stages of its own
};

/** The scenario's own plan, timed as the planner's candidates are (analytical, two iterations, replicas folded where
 *  symmetric), whether the planner's tree holds it, and whether it fits `budget_bytes` (the search's). */
OwnPlan own_plan(const Scenario& base, const PlanOptions& options, double budget_bytes);

/** One line for the report: the own plan's time against the best plan's, and when the own plan is faster, why the
 *  search did not find it. */
std::string own_plan_line(const OwnPlan& own, const Plan& best);

} // namespace cs
