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

/** One node of `gpus` H100s on NVSwitch, a NIC each (for pipeline and schedule tests). */
inline PlatformSpec one_h100_node(int gpus)
{
  ClusterParams c;
  c.nodes = 1;
  c.gpus_per_node = gpus;
  c.network.nics_per_node = gpus;
  return build_platform_spec(c, *DeviceCatalog::builtin().find("h100-sxm5"));
}

/** The stage shape of a training run with these degrees: w.parallel's, dp replicas, pp devices of `chunks` chunks
 *  placed as `schedule` places them (Megatron's interleaved placement without one); data-parallel communication is not
 *  priced beside the passes. */
inline StageShape stage_shape(const TrainingParams& w, int dp, int pp, int chunks = 1,
                              const PipelineSchedule* schedule = nullptr)
{
  StageShape shape;
  ParallelParams p = w.parallel;
  p.dp = dp;
  p.pp = pp;
  shape.parallel = p.layout(0);
  shape.map = schedule ? schedule->stage_map(pp, chunks) : StageMap::interleaved(pp, chunks);
  return shape;
}

inline BuiltTraining build_transformer_training(const TrainingParams& w, const KernelCostModel& cost, int dp, int pp,
                                                const std::string& schedule_name, const PlatformSpec& platform,
                                                const std::string& sync_name = "ring-allreduce")
{
  auto schedule = Registry<PipelineSchedule>::instance().create(schedule_name);
  auto sync = Registry<GradientSync>::instance().create(sync_name);
  BuiltTraining out;
  out.stages =
      transformer_stages(w, cost, platform, stage_shape(w, dp, pp, schedule->chunks(w.parallel.vpp), schedule.get()));
  TrainingPlan plan;
  plan.params = &w;
  plan.stages = &out.stages;
  plan.schedule = schedule.get();
  plan.sync = sync.get();
  plan.platform = &platform;
  plan.cost = &cost;
  plan.parallel = stage_shape(w, dp, pp).parallel;
  plan.overlap = pp > 1 || w.parallel.vpp > 1 ? GradientOverlap::AFTER_BACKWARD : GradientOverlap::DURING_BACKWARD;
  out.training = build_training(plan);
  lower_training(out.training, platform, CollectivePricing::FLOWS);
  return out;
}

} // namespace cs::testing
