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
  // In-memory checkpoints (Gemini): each node's shard also sits in its partner node's host memory. A hardware
  // failure takes its node's memory; one on a node whose partner lost its memory since the latest checkpoint that
  // became durable after that loss loses the shard, and the job falls back to its copy in persistent storage.
  bool in_memory = false;
  double storage_interval_s = 0; // productive time between persistent copies (0: none, a double loss starts over)
  double storage_durable_s = 0;  // from a persistent copy's start until it survives (host memory to storage)
  double storage_load_s = 0;     // reading the persistent copy back
};

/** The partner node holding node `node`'s in-memory checkpoint, of `nodes`: pairs 0-1, 2-3, ..., an odd last node
 *  with the one before it; a single node is its own. */
int checkpoint_peer(int node, int nodes);

/** One seed's run over `days`. Times in seconds; lost work is wall time of the whole job. */
struct LongRunOutcome {
  double wall_s = 0, productive_s = 0;
  int interruptions = 0; // unexpected and planned
  int unexpected = 0;
  std::map<std::string, int> by_cause;
  double redo_s = 0;        // work done since the last durable checkpoint, lost at a failure
  double restart_s = 0;     // detection, restart and waits for a repaired node
  double checkpoint_s = 0;  // stalls for checkpoints
  double spare_wait_s = 0;  // part of restart_s spent waiting for a node (no spare free)
  int in_memory_losses = 0; // in-memory checkpoints lost with a node and its partner (back to persistent storage)
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
