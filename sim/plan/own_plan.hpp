// The scenario's own parallel plan set beside the planner's best: timed alike, and placed in the search or not.
#pragma once

#include "sim/plan/planner.hpp"
#include "sim/scenario/scenario.hpp"

#include <string>

namespace cs {

/** What `plan` says of the configuration a scenario already runs, when it runs on the GPUs planned for. */
struct OwnPlan {
  Plan plan;              // its layout, micro-batch, schedule, recomputation and FP8 (stage_layers as written)
  double iteration_s = 0; // timed as the planner times its candidates
  bool searched =
      false;           // a plan with the same layout, micro-batch, schedule, recomputation, ZeRO and FP8 was enumerated
  std::string outside; // when not searched, or searched with other stages: what in it the search does not try
};

/** The scenario's own plan, timed as the planner's candidates are (analytical, two iterations, replicas folded where
 *  symmetric), and whether the planner's tree holds it. */
OwnPlan own_plan(const Scenario& base, const PlanOptions& options);

/** One line for the report: the own plan's time against the best plan's, and when the own plan is faster, why the
 *  search did not find it. */
std::string own_plan_line(const OwnPlan& own, const Plan& best);

} // namespace cs
