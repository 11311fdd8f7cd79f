// The scenario a plan runs as: the base reshaped to the plan's layout, batch split, recomputation and FP8.
#pragma once

#include "sim/scenario/scenario.hpp"
#include "workloads/training/training_params.hpp"

namespace cs {

/** The training parameters of `s`, made its own (a scenario's copies share their workload) so they can change. */
TrainingParams& own_training(Scenario& s);

} // namespace cs
