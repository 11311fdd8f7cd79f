// Every plan of a scenario simulated, none pruned: what the planner tests hold each plan's bound and time against.
#pragma once

#include "sim/plan/planner.hpp"

namespace cs::testing {

/** Every plan of `base` on `gpus` GPUs, each simulated (exhaustive search), fastest first. */
inline PlanSearch every_plan(const Scenario& base, int gpus)
{
  PlanOptions all;
  all.gpus = gpus;
  all.top = 100000;
  all.exhaustive = true;
  return search_plans(base, all);
}

} // namespace cs::testing
