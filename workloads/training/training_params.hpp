// What a training workload reads from `workload:`: the model, batch sizes, how it is split over GPUs, iterations.
#pragma once

#include "models/transformer/framework.hpp"
#include "models/transformer/model_params.hpp"

#include <string>
#include <vector>

namespace cs {

struct BatchParams {
  int global = 256;
  int micro = 4;
};

struct ParallelParams {
  int dp = 0; // 0 = all GPUs / (tp * pp)
  int tp = 1;
  int pp = 1;
  int vpp = 1;
  int ep = 1;  // expert parallelism: experts split over ep data-parallel replicas (MoE models)
  int etp = 0; // expert tensor parallelism (0 = tp); experts' MLPs split over etp ranks
  bool sequence_parallel = false;
  int zero = 0;
  std::string partition = "even";     // pipeline stages: even (same layers each) | balanced (by cost)
  std::string placement = "tp-pp-dp"; // rank order on GPUs, innermost first: tp-pp-dp | tp-dp-pp
  std::vector<int> stage_layers; // layers of each virtual stage, given (e.g. by `clustersim plan`); overrides partition
};

/** The expert tensor-parallel degree in effect: etp, or tp when not given. */
inline int expert_tp(const ParallelParams& p) { return p.etp > 0 ? p.etp : p.tp; }
/** Expert-parallel ranks per replica and pipeline device: tp / etp (Megatron-Core's MoE parallel folding). With
 *  etp = tp the experts split over the TP ranks like the dense MLP and each replica is one EP rank; with etp < tp each
 *  group of etp TP ranks is an EP rank of its own (etp = 1: every GPU). */
inline int ep_fold(const ParallelParams& p) { return p.tp / expert_tp(p); }
/** Data-parallel replicas one expert-parallel group spans: ep / (tp / etp), all their TP ranks. */
inline int ep_replicas(const ParallelParams& p) { return p.ep / ep_fold(p); }

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
};

/** Reads the training keys of `workload:` (model, batch, parallel, iterations, gradient_bucket). */
void read_training(ObjectReader& r, TrainingParams& w);

} // namespace cs
