// The long run: a training job's steps, checkpoints, failures and restarts over days, drawn seed by seed.
#pragma once

#include "platform/failure_params.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cs {

/** What the long run composes: the simulated step, the checkpoint's costs and the cluster's failure process. */
struct LongRunSetup {
  double step_s = 0;          // one training step (the DES's iteration time)
  double tokens_per_step = 0; // tokens one step trains
  int gpus = 0, nodes = 0, nics = 0;
  FailureParams failures;
  int spares = 0;
  double interval_s = 0; // productive time between two checkpoints
  double stall_s = 0;    // what taking a checkpoint stops the job for
  double durable_s = 0;  // from the start of a checkpoint until it survives a failure (>= stall_s)
  double load_s = 0;     // reading the latest checkpoint back at a restart (after failures.restart)
  double days = 0;
};

/** One seed's run over `days`. Times in seconds; lost work is wall time of the whole job. */
struct LongRunOutcome {
  double wall_s = 0, productive_s = 0;
  int interruptions = 0; // unexpected and planned
  int unexpected = 0;
  std::map<std::string, int> by_cause;
  double redo_s = 0;       // work done since the last durable checkpoint, lost at a failure
  double restart_s = 0;    // detection, restart and waits for a repaired node
  double checkpoint_s = 0; // stalls for checkpoints
  double spare_wait_s = 0; // part of restart_s spent waiting for a node (no spare free)
  double ettr() const { return wall_s > 0 ? productive_s / wall_s : 0; }
};

/** The job's failure rate per second by cause (the catalog's per-unit rates times this job's units). */
std::map<std::string, double> failure_rates(const LongRunSetup& setup);

/** Draws one run of `setup` with `seed`: failures as renewal processes per cause (exponential or Weibull with the
 *  rate's mean), a failure losing the work since the last durable checkpoint, then detection and restart, and for a
 *  hardware cause a spare node swapped in (or, with none free, a wait for a repaired one); planned interruptions take
 *  a checkpoint first and lose nothing. */
LongRunOutcome simulate_long_run(const LongRunSetup& setup, std::uint64_t seed);

} // namespace cs
