// Workload kind `transformer-training`: a transformer (or a generic layer graph) trained with data, tensor and
// pipeline parallelism and ZeRO, built as a task graph and run on the scenario's backend.
#pragma once

#include "core/workload.hpp"
#include "workloads/training/training_params.hpp"

#include <memory>
#include <string>

namespace cs {

class TrainingWorkload : public Workload {
public:
  TrainingParams params;

  void configure(ObjectReader& r) override { read_training(r, params); }
  void check(const WorkloadEnv& env) const override;
  WorkloadOutput run(const RunEnv& env) const override;
  std::unique_ptr<Workload> clone() const override { return std::make_unique<TrainingWorkload>(*this); }
};

/** The pipeline schedule a training workload runs: policies.pipeline, else 1f1b (interleaved-1f1b when vpp > 1). */
std::string pipeline_schedule_name(const TrainingParams& params, const PolicySelection& policies);

} // namespace cs
