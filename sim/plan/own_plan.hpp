// The scenario's own parallel plan set beside the planner's best: timed alike, and placed in the search or not.
#pragma once

#include "sim/plan/planner.hpp"
#include "sim/scenario/scenario.hpp"

#include <string>
#include <utility>

namespace cs {

/** What `plan` says of the configuration a scenario already runs, when it runs on the GPUs planned for. */
struct OwnPlan {
  Plan plan;               // its layout, micro-batch, schedule, recomputation and FP8 (stage_layers as written)
  double iteration_s = 0;  // timed as the planner times its candidates
  double memory_bytes = 0; // the run's peak per GPU
  bool searched = false;   // the tree holds its layout, micro-batch, schedule, recomputation, ZeRO and FP8
  std::string outside;     // why the search may pass it by: not in the tree, over the budget, or stages of its own
};

/** The scenario's own run, timed as the planner's candidates are, in a child process started at construction: it
 *  runs beside the search (its first timelines leave the workers idle). result() waits for it, or runs it here when
 *  no child could be started or the child failed. */
class OwnPlanTiming {
public:
  explicit OwnPlanTiming(const Scenario& base);
  ~OwnPlanTiming();
  OwnPlanTiming(const OwnPlanTiming&) = delete;
  OwnPlanTiming& operator=(const OwnPlanTiming&) = delete;
  /** The run's iteration time and peak memory per GPU (bytes). */
  std::pair<double, double> result();

private:
  const Scenario& base_;
  int pid_ = -1, fd_ = -1;
};

/** The scenario's own plan, timed as the planner's candidates are (analytical, two iterations, replicas folded where
 *  symmetric; by `timing` when given), whether the planner's tree holds it, and whether it fits `budget_bytes` (the
 *  search's). */
OwnPlan own_plan(const Scenario& base, const PlanOptions& options, double budget_bytes,
                 OwnPlanTiming* timing = nullptr);

/** One line for the report: the own plan's time against the best plan's, and when the own plan is faster, why the
 *  search did not find it. */
std::string own_plan_line(const OwnPlan& own, const Plan& best);

} // namespace cs
