// Training extensions: what a layer or a step adds to the task graph besides its passes (an MoE layer's dispatch,
// experts and combine today), one registered file each, SimGrid-plugin style: the builder asks every registered kind
// whether it applies to the plan and hands it the segments it claims; nothing in the builder names one.
#pragma once

#include "base/registry.hpp"
#include "core/task_graph.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "workloads/training/stage_costs.hpp"

#include <memory>
#include <utility>
#include <vector>

namespace cs {

struct TrainingPlan;
struct TrainingGraph;

/** Where a claimed segment runs: replica `replica`'s pipeline device `device` (its compute stream `stream`), in op
 *  `op` of virtual stage `stage`. */
struct SegmentSite {
  int replica = 0;
  int device = 0;
  int stream = -1;
  const PipelineOp* op = nullptr;
  int stage = 0;
};

/** One extension, made for one plan. */
class TrainingExtension {
public:
  virtual ~TrainingExtension() = default;
  /** Whether it emits `segment` itself (the builder then runs the op piece by piece); a segment no extension claims
   *  is one compute task. */
  virtual bool claims(const Segment& segment) const = 0;
  /** Emits claimed `segment` at `site` with `labels`: returns its first and last tasks and adds its compute time to
   *  `busy`. */
  virtual std::pair<int, int> emit(const SegmentSite& site, const Segment& segment, TaskLabels labels,
                                   double& busy) = 0;
  /** Adds what it observed to the built graph's facts, once every iteration is built. */
  virtual void finish(TrainingGraph& out) const {}
};

/** A registered kind of extension: makes one for a plan, or nothing when the plan has no use for it. */
class TrainingExtensionKind {
public:
  virtual ~TrainingExtensionKind() = default;
  /** Throws std::invalid_argument when the plan needs it but cannot give what it needs. */
  virtual std::unique_ptr<TrainingExtension> make(const TrainingPlan& plan, TaskGraph& graph) const = 0;
};

/** Every registered kind's extension for `plan` (those that apply), in name order. */
std::vector<std::unique_ptr<TrainingExtension>> make_training_extensions(const TrainingPlan& plan, TaskGraph& graph);

/** Registers `Type` (a TrainingExtensionKind) as extension `name` at static-initialisation time. */
#define CS_REGISTER_TRAINING_EXTENSION(Type, name, description)                                                        \
  static const bool cs_registered_extension_##Type = ::cs::Registry<::cs::TrainingExtensionKind>::instance().add(      \
      name, description, [] { return std::unique_ptr<::cs::TrainingExtensionKind>(new Type()); })

} // namespace cs
