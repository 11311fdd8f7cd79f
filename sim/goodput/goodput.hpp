// `clustersim goodput`: a training scenario's step, checkpoints and the cluster's failures composed over days.
#pragma once

#include "sim/goodput/long_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "workloads/training/training_params.hpp"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cs {

/** What a checkpoint costs this job (closed forms over the model state; docs/goodput.md). */
struct CheckpointCost {
  double bytes = 0;     // one copy of the model state: weights in the model's dtype, fp32 master weights, Adam moments
  double write_s = 0;   // all of it to storage, at the storage's bandwidth or the NICs', whichever is smaller
  double stall_s = 0;   // what the job waits for (sync: the write; async: the copy to host memory; in-memory: the
                        // copy to a peer node)
  double durable_s = 0; // from the start until it survives a failure
  double load_s = 0;    // reading it back at a restart: the write's traffic, storage to the GPUs
  // Async with the step simulated beside the write: the write with the NICs' share the step leaves it, what its
  // load on the NICs cost the steps it ran beside (part of stall_s), and whether this was simulated at all (false:
  // the write is timed on an idle fabric and costs the steps nothing).
  double write_beside_s = 0;
  double step_slowdown_s = 0;
  bool beside_step = false;
};

/** One simulated step of a training scenario (on its backend; in a child process on simgrid, whose engine starts
 *  once per process), with `adjust_platform` applied to its platform first when given. */
struct StepRun {
  double iteration_s = 0, tokens_per_step = 0, parameters = 0;
  double makespan_s = 0;        // every simulated iteration, from idle
  double nic_busy_fraction = 0; // the busiest NIC's busy time over the step
};
StepRun run_step(const Scenario& scenario, const std::function<void(PlatformSpec&)>& adjust_platform = {});

/** The checkpoint of `scenario`'s model on its cluster under its workload.checkpoint mode. With `step` (the plain
 *  run of its step), an asynchronous write is simulated beside the step's own traffic; without, on an idle fabric. */
CheckpointCost checkpoint_cost(const Scenario& scenario, double parameters, const StepRun* step = nullptr);

/** The long run of `scenario` over `days` (its interval left 0): its cluster's units, failures and spares, the step,
 *  and the checkpoint's costs (for in-memory checkpoints, also the fallback to persistent storage). */
LongRunSetup long_run_setup(const Scenario& scenario, const StepRun& step, const CheckpointCost& cost, double days);

struct GoodputOptions {
  double days = 0;
  int seeds = 20;
  bool by_gpus = false; // also the weak-scaling curve (ettr_by_gpus): a step and checkpoint simulated per size
};

/** Mean and half-width of the 95% interval over seeds. */
struct Estimate {
  double mean = 0, half = 0;
};

/** One size of the weak-scaling curve: the step simulated on that many GPUs (the same per-replica batch), its
 *  checkpoint, and the long run's mean ETTR and goodput. */
struct ScaledRun {
  int gpus = 0;
  double step_s = 0, ettr = 0, goodput_tokens_per_s = 0;
};

struct GoodputResult {
  LongRunSetup setup;
  CheckpointCost checkpoint;
  double young_daly_s = 0; // sqrt(2 x stall x job MTBF)
  double mtbf_s = 0;       // the job's mean time between unexpected interruptions, from the rates
  Estimate interruptions, unexpected, ettr, goodput_tokens_per_s, redo_gpu_h, restart_gpu_h, checkpoint_gpu_h;
  Estimate in_memory_losses; // in-memory checkpoints lost with a node and its partner
  std::map<std::string, Estimate> by_cause;
  std::vector<std::pair<double, double>> ettr_by_interval; // the search of `optimal`: interval, mean ETTR
  // The same job, weakly scaled, on 1/8 to 4 times its nodes at the same per-unit rates and interval.
  std::vector<ScaledRun> ettr_by_gpus;
};

/** Runs `scenario` once (its step), then the long run over the seeds; with interval optimal, searches it. Throws
 *  InputError for what the long run cannot use (no failures, no storage, an interval shorter than a write). */
GoodputResult run_goodput(const Scenario& scenario, const GoodputOptions& options);

/** `scenario` on 1/8, 1/4, 1/2, 1, 2 and 4 times its nodes, weakly scaled (data-parallel degree and global batch
 *  with the GPUs; sizes the parallel layout cannot take are left out): each size's step and checkpoint simulated,
 *  then its long run at the same per-unit rates, at `job`'s interval (at least that size's checkpoint write) or,
 *  with `optimal`, at that size's own best interval. The job's own size is `job` itself. */
std::vector<ScaledRun> ettr_by_gpus(const Scenario& scenario, const GoodputResult& job, int seeds);

/** The plots of --plots: ETTR against the checkpoint interval (with interval optimal) and against the GPU count, as
 *  (name, bytes) of PNG and SVG files. */
std::vector<std::pair<std::string, std::string>> goodput_plots(const GoodputResult& result);

/** goodput.json. */
nlohmann::ordered_json goodput_json(const GoodputResult& result, const GoodputOptions& options);
/** The summary printed on stdout. */
std::string goodput_summary(const GoodputResult& result, const GoodputOptions& options);

/** The interval (setup.interval_s is ignored) that maximises the mean ETTR over `seeds`, searched on a log grid. */
GoodputResult best_interval(LongRunSetup setup, int seeds);

/** The long run's estimates of `setup` over `seeds` seeds (seed 1, 2, ...). */
GoodputResult estimate_long_run(const LongRunSetup& setup, int seeds);

} // namespace cs
