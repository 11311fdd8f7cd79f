// `clustersim goodput`: a training scenario's step, checkpoints and the cluster's failures composed over days.
#pragma once

#include "sim/goodput/long_run.hpp"
#include "sim/scenario/scenario.hpp"

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
};

/** The checkpoint of `scenario`'s model on its cluster under its workload.checkpoint mode. */
CheckpointCost checkpoint_cost(const Scenario& scenario, double parameters);

struct GoodputOptions {
  double days = 0;
  int seeds = 20;
};

/** Mean and half-width of the 95% interval over seeds. */
struct Estimate {
  double mean = 0, half = 0;
};

struct GoodputResult {
  LongRunSetup setup;
  CheckpointCost checkpoint;
  double young_daly_s = 0; // sqrt(2 x stall x job MTBF)
  double mtbf_s = 0;       // the job's mean time between unexpected interruptions, from the rates
  Estimate interruptions, unexpected, ettr, goodput_tokens_per_s, redo_gpu_h, restart_gpu_h, checkpoint_gpu_h;
  std::map<std::string, Estimate> by_cause;
  std::vector<std::pair<double, double>> ettr_by_interval; // the search of `optimal`: interval, mean ETTR
  // The same job on 1/8 to 4 times the nodes at the same per-unit rates, step and interval: GPUs, mean ETTR.
  std::vector<std::pair<int, double>> ettr_by_gpus;
};

/** Runs `scenario` once (its step), then the long run over the seeds; with interval optimal, searches it. Throws
 *  InputError for what the long run cannot use (no failures, no storage, an interval shorter than a write). */
GoodputResult run_goodput(const Scenario& scenario, const GoodputOptions& options);

/** ETTR of `setup` on 1/8, 1/4, 1/2, 1, 2 and 4 times its nodes (at least one), the step and interval held. */
std::vector<std::pair<int, double>> ettr_by_gpus(const LongRunSetup& setup, int seeds);

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
