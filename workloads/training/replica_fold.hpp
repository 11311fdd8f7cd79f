// Which data-parallel replicas a training run simulates: all, or replica 0 standing for the others, with what each of
// its flows stands for on a shared fabric (docs/scale.md).
#pragma once

#include "core/workload.hpp"
#include "workloads/training/training_builder.hpp"

namespace cs {

/** `--replicas one` where replica 0 cannot stand for the others: throws InputError (exit 2, nothing written) with the
 *  reason. */
void check_replica_fold(const RunEnv& env, const TrainingPlan& plan);

/** The lowered training graph of the replicas env.replicas asks for (auto: replica 0 alone where it stands for the
 *  others and the full graph would be large, or always behind an oversubscribed fabric), its flows' copies set
 *  (TaskGraph::flow_copies). Sets plan.one_replica. A TaskLimitError it throws says which fold would apply. */
TrainingGraph build_replicas(TrainingPlan& plan, const RunEnv& env, int dp);

} // namespace cs
