// What a sync-training workload reads from `workload:`: the model and batch each replica trains, replicas and
// pipeline stages, how many steps to run, and parameter-server shards.
#pragma once

#include "models/transformer/framework.hpp"
#include "models/transformer/model_params.hpp"

namespace cs {

struct SyncTrainingParams {
  ModelParams model;
  FrameworkProfile framework = builtin_frameworks().at(1); // megatron-core
  int global_batch = 256; // samples per step over all replicas
  int micro_batch = 4;    // samples per microbatch
  int dp = 0;             // replicas (0 = all GPUs / pp)
  int pp = 1;             // pipeline stages per replica (sdpipe)
  int steps = 100;        // steps per replica on average: the run ends after dp x steps steps
  double target_updates = 0; // report when this many gradients have entered models (0 = none)
  int servers = 0;        // parameter-server shards (0 = one per node)
};

/** Reads the sync-training keys of `workload:`. */
void read_sync_training(ObjectReader& r, SyncTrainingParams& p);

} // namespace cs
