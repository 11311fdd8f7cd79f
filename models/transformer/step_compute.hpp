// The compute of one training step on one replica, from the kernel cost stack: per pipeline stage the forward and
// backward of one microbatch and the optimizer step, and the gradient bytes each stage synchronises.
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/parallel/parallel_layout.hpp"
#include "models/transformer/framework.hpp"
#include "models/transformer/model_params.hpp"

#include <vector>

namespace cs {

struct StageStep {
  double micro_s = 0;     // forward + backward of one microbatch
  double optimizer_s = 0; // the optimizer step over the stage's parameters
  double params = 0;
  double sync_bytes = 0; // what the stage averages per step (gradients in the framework's reduce dtype)
};

struct StepCompute {
  std::vector<StageStep> stages;
  int microbatches = 1; // per replica and step
  double samples = 0;   // per replica and step
  double parameters = 0;

  /** One replica's step at full speed: the 1F1B pipeline iteration (sum of stages, then the slowest stage for each
   *  further microbatch) and the slowest optimizer step. `stage_scale` multiplies each stage's time (1 / speed). */
  double iteration_s(const std::vector<double>& stage_scale) const;
};

/** What one replica trains per step. */
struct StepShape {
  int global_batch = 1; // samples per step over all replicas
  int micro_batch = 1;
  ParallelLayout parallel; // its dp replicas and pp stages (tp = 1)
};

/** Layers split evenly over `shape.parallel.pp` stages (embedding on the first, head on the last); tp = 1. Throws
 *  std::invalid_argument when the layers or the batch do not divide. */
StepCompute step_compute(const ModelParams& model, const FrameworkProfile& fw, const StepShape& shape,
                         const KernelCostModel& cost);

} // namespace cs
