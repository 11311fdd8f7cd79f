// What a training workload reads from `workload:`: the model, batch sizes, how it is split over GPUs, iterations.
#pragma once

#include "models/parallel/parallel_layout.hpp"
#include "models/transformer/framework.hpp"
#include "models/transformer/model_params.hpp"

#include <string>
#include <vector>

namespace cs {

struct BatchParams {
  int global = 256;
  int micro = 4;
};

/** `workload.parallel:` as the scenario gives it. The data-parallel degree may be left 0 (every GPU the other degrees
 *  leave); layout() resolves it, and everything past the checks reads the resolved ParallelLayout. */
/** How layers are cut into pipeline stages when stage_layers does not give them. */
enum class StagePartition {
  EVEN,     // the same layers on each stage
  BALANCED, // by cost: the stage holding the embedding or the output layer takes fewer
};

struct ParallelParams {
  int dp = 0; // 0 = all GPUs / (tp * cp * pp)
  int tp = 1;
  int cp = 1;
  int pp = 1;
  int vpp = 1;
  int ep = 1;  // expert parallelism: experts split over ep data-parallel replicas (MoE models)
  int etp = 0; // expert tensor parallelism (0 = tp); experts' MLPs split over etp ranks
  bool sequence_parallel = false;
  CpComm cp_comm = CpComm::P2P;
  int zero = 0;
  int dp_replicate = 1; // HSDP: replicas of the ZeRO-sharded state (ParallelLayout::dp_replicate)
  StagePartition partition = StagePartition::EVEN;
  Placement placement = Placement::TP_PP_DP;
  std::vector<int> stage_layers; // layers of each virtual stage, given (e.g. by `clustersim plan`); overrides partition
  std::string pipeline_layout;   // Megatron-Core's layout string, as given; read into stage_layers
  // The embedding (first stage) and the loss (last stage) count as a layer each in the even split (Megatron
  // --account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split).
  bool account_for_embedding = false, account_for_loss = false;
  /** The transformer layers plus the slots the embedding and the loss take. */
  int pipeline_slots(int layers) const { return layers + (account_for_embedding ? 1 : 0) + (account_for_loss ? 1 : 0); }

  /** The data-parallel degree on `gpus` GPUs: dp, or every GPU the other degrees leave. */
  int dp_on(long long gpus) const;
  /** The resolved layout on `gpus` GPUs. */
  ParallelLayout layout(long long gpus) const;
  /** Sets every degree, the ZeRO stage, sequence parallelism and the placement from `layout` (a plan's). */
  void assign(const ParallelLayout& layout);
};

/** How a checkpoint is taken: sync (the job waits for storage), async (two stages, as MegaScale and Gemini: GPU to
 *  host memory while the job waits, host to storage in the background), in-memory (to a peer node's host memory). */
enum class CheckpointMode { SYNC, ASYNC, IN_MEMORY };

/** `workload.checkpoint`: read by clustersim goodput (the long run). */
struct CheckpointParams {
  bool optimal = false; // interval: optimal = the one that maximises the effective training time ratio
  Seconds interval;     // productive time between two checkpoints (0 = no checkpoint)
  CheckpointMode mode = CheckpointMode::ASYNC;
  // in-memory: productive time between the copies written from host memory to persistent storage, what a job falls
  // back to when a node and its partner both lose their memory (0 = none: it starts over)
  Seconds storage_interval;
  bool given = false; // the scenario has a checkpoint block
};

struct TrainingParams {
  ModelParams model;
  FrameworkProfile framework = builtin_frameworks().at(1); // megatron-core
  BatchParams batch;
  ParallelParams parallel;
  int iterations = 2;
  Bytes gradient_bucket{25.0 * 1048576.0};
  // Share of each GPU's memory the model's bytes may not use: the CUDA context and NCCL's buffers (1-2 GB) and the
  // caching allocator's fragmentation (reserved but unusable blocks).
  double memory_reserve = 0.05;
  double tokens = 0; // a token budget: the report adds time_to_train_s (0 = none)
  CheckpointParams checkpoint;
};

/** Reads the training keys of `workload:` (model, batch, parallel, iterations, gradient_bucket). */
void read_training(ObjectReader& r, TrainingParams& params);

} // namespace cs
