// Worker processes that simulate a planner's candidate plans side by side, forked before the search grows.
#pragma once

#include "sim/plan/planner.hpp"
#include "sim/run/scenario_run.hpp"
#include "sim/scenario/scenario.hpp"

#include <nlohmann/json.hpp>
#include <sys/types.h>
#include <tuple>
#include <vector>

namespace cs {

/** A plan as the workers receive it: its shape, schedule, recomputation, FP8 and stage layers (not its figures). */
nlohmann::json plan_json(const Plan& plan);
Plan plan_from_json(const nlohmann::json& j);

/** One simulated step's figures: iteration time (s), samples/s, TFLOP/s per GPU. */
using PlanTiming = std::tuple<double, double, double>;

/** `s` set to run as the planner times plans: analytical, two iterations (the second measured). */
Scenario as_timed(Scenario s);
/** The scenario a plan runs: `base` reshaped to `plan` on `gpus` GPUs, as_timed. Made when needed: a scenario kept per
 * candidate was most of a 2,048-GPU MoE search's memory. */
Scenario timing_scenario(const Scenario& base, int gpus, const Plan& plan);
/** timing_scenario run once (replicas folded where symmetric), as the planner times every candidate. */
PlanTiming time_plan(const Scenario& base, int gpus, const Plan& plan);
/** A scenario (already as_timed) run as time_plan runs a plan: its whole result, or the figures the planner ranks by.
 */
RunResult run_timed(const Scenario& s);
PlanTiming time_scenario(const Scenario& s);

/** The workers a planner search uses by default: one per core, at most 8 (the bounds are worked out between batches
 *  in one process, so more rarely pay, and each worker holds a simulated step's memory). */
int default_plan_jobs();

/** `workers` child processes, forked at construction (while the parent is small, so little is copied), each timing
 *  the plans it is sent. With fewer than two workers nothing is forked and plans are timed in this process. Children
 *  share nothing with the parent after the fork: a plan goes out as JSON, its timing comes back exact. */
class SimulationPool {
public:
  SimulationPool(const Scenario& base, int gpus, int workers);
  ~SimulationPool();
  SimulationPool(const SimulationPool&) = delete;
  SimulationPool& operator=(const SimulationPool&) = delete;

  int workers() const { return static_cast<int>(children_.size()) > 0 ? static_cast<int>(children_.size()) : 1; }
  /** The workers' process ids (none without workers): for tests that end one. */
  std::vector<pid_t> worker_pids() const;
  /** Times up to workers() plans at once, in the order given. Throws std::runtime_error when a worker fails or has
   *  died (its plan refused, or its process gone). */
  std::vector<PlanTiming> time(const std::vector<Plan>& plans);
  /** time() in two halves, so that the caller can work while the workers simulate: start() hands the plans out (with
   *  no workers it only keeps them), collect() waits for their times (with no workers it simulates them). */
  void start(const std::vector<Plan>& plans);
  std::vector<PlanTiming> collect();
  /** Whether the plans run in other processes (so that work between start() and collect() runs beside them). */
  bool concurrent() const { return !children_.empty(); }

private:
  struct Child {
    pid_t pid = -1;
    int fd = -1; // this side of the socket pair: plans out, timings back
  };
  const Scenario& base_;
  int gpus_;
  std::vector<Child> children_;
  std::vector<Plan> pending_; // handed out by start(), not yet collected
};

} // namespace cs
