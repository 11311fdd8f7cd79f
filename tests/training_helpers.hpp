// Builds a transformer's training graph the way the training workload does, for tests that look inside it.
#pragma once

#include "base/registry.hpp"
#include "workloads/training/training_builder.hpp"

#include <string>

namespace cs::testing {

struct BuiltTraining {
  StageSet stages;
  TrainingGraph training; // lowered: collectives are flows
};

inline BuiltTraining build_transformer_training(const TrainingParams& w, const KernelCostModel& cost, int dp, int pp,
                                                const std::string& schedule_name, const PlatformSpec& platform,
                                                const std::string& sync_name = "ring-allreduce")
{
  auto schedule = Registry<PipelineSchedule>::instance().create(schedule_name);
  auto sync = Registry<GradientSync>::instance().create(sync_name);
  BuiltTraining out;
  out.stages = transformer_stages(w, cost, platform, StageShape{pp, schedule->chunks(w.parallel.vpp), false, dp, {}});
  TrainingPlan plan;
  plan.params = &w;
  plan.stages = &out.stages;
  plan.schedule = schedule.get();
  plan.sync = sync.get();
  plan.platform = &platform;
  plan.cost = &cost;
  plan.dp = dp;
  plan.pp = pp;
  plan.tp = w.parallel.tp;
  plan.overlap = pp > 1 || w.parallel.vpp > 1 ? GradientOverlap::AFTER_BACKWARD : GradientOverlap::DURING_BACKWARD;
  out.training = build_training(plan);
  lower_training(out.training, platform, CollectivePricing::FLOWS);
  return out;
}

} // namespace cs::testing
