// The long run on fewer and more GPUs: the job weakly scaled (its data-parallel degree and global batch grow with
// the GPUs), each size's step and checkpoint simulated, then its failures drawn at the same per-unit rates.
#include "sim/goodput/goodput.hpp"

#include "base/input_error.hpp"
#include "sim/run/scenario_checks.hpp"
#include "workloads/training/training_workload.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace cs {
namespace {

// `s` on `nodes` nodes with the same per-replica batch, or nothing where the parallel layout cannot take that size.
std::optional<Scenario> weakly_scaled(const Scenario& s, int nodes)
{
  const auto& training = workload_as<TrainingWorkload>(s);
  std::shared_ptr<Workload> copy = training.clone();
  auto& params = static_cast<TrainingWorkload&>(*copy).params;
  const int dp = params.parallel.layout(s.cluster.gpus).dp;
  Scenario v = s;
  v.cluster.nodes = nodes;
  v.cluster.gpus = nodes * s.cluster.gpus_per_node;
  v.cluster.spares = std::min(s.cluster.spares, nodes);
  const long long model_parallel = static_cast<long long>(s.cluster.gpus) / dp;
  if (v.cluster.gpus % model_parallel != 0 || params.batch.global % dp != 0)
    return std::nullopt;
  const int scaled_dp = static_cast<int>(v.cluster.gpus / model_parallel);
  if (params.parallel.dp > 0)
    params.parallel.dp = scaled_dp;
  params.batch.global = params.batch.global / dp * scaled_dp;
  v.workload = copy;
  try {
    check_scenario(v);
  } catch (const InputError&) { // e.g. a pipeline the smaller batch cannot fill
    return std::nullopt;
  }
  return v;
}

} // namespace

std::vector<ScaledRun> ettr_by_gpus(const Scenario& s, const GoodputResult& job, int seeds)
{
  std::vector<ScaledRun> out;
  for (double scale : {0.125, 0.25, 0.5, 1.0, 2.0, 4.0}) {
    const int nodes = std::max(1, static_cast<int>(std::lround(job.setup.nodes * scale)));
    if (!out.empty() && out.back().gpus == nodes * s.cluster.gpus_per_node)
      continue;
    if (nodes == job.setup.nodes) { // the job itself, already run
      out.push_back({job.setup.gpus, job.setup.step_s, job.ettr.mean, job.goodput_tokens_per_s.mean});
      continue;
    }
    const std::optional<Scenario> v = weakly_scaled(s, nodes);
    if (!v)
      continue;
    const StepRun step = run_step(*v);
    const CheckpointCost cost = checkpoint_cost(*v, step.parameters, &step);
    LongRunSetup at = long_run_setup(*v, step, cost, job.setup.days);
    at.interval_s = std::max(job.setup.interval_s, cost.durable_s);
    // With `optimal`, each size takes its own best interval (its write and failure rate differ); else it is held.
    const bool optimal = workload_as<TrainingWorkload>(*v).params.checkpoint.optimal;
    const GoodputResult r = optimal ? best_interval(at, seeds) : estimate_long_run(at, seeds);
    out.push_back({at.gpus, at.step_s, r.ettr.mean, r.goodput_tokens_per_s.mean});
  }
  return out;
}

} // namespace cs
