// A transformer's pieces (a layer, an MoE layer's dense part, the head, the embedding) priced once for a shape: what
// transformer_stages cuts into pipeline stages.
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/pass_cost.hpp"
#include "platform/platform_spec.hpp"
#include "workloads/training/training_params.hpp"

namespace cs {

/** Each piece for one microbatch on one tensor-parallel rank, its blocking TP collectives and its CP exchange folded
 *  in. They follow from the model (recomputation, FP8, dispatcher), the micro-batch, tp, cp and its exchange,
 *  sequence parallelism, the framework and the platform, and not from dp, pp, ep or the stage partition: a planner
 *  search prices them once for the many plans that share them. */
struct StagePieces {
  PieceTimes layer;      // a dense layer, recomputed as the model says
  PieceTimes layer_kept; // block recomputation: a layer that keeps its activations (else unset)
  PieceTimes head, embedding;
  PieceTimes moe_layer;            // an MoE layer's dense part (its experts and all-to-alls come per step)
  PieceTimes moe_shared;           // of it, the shared experts', when they run beside the all-to-alls (else zero)
  PieceTimes mtp_entry;            // a multi-token prediction module's own kernels before its layer
  double tp_seconds_per_layer = 0; // TP collectives' time in one layer's passes (exposed), before block recomputation
  double tp_bytes_per_layer = 0;   // the bytes they move over one TP group, the same
  double cp_seconds_per_layer = 0; // the CP exchange's exposed time in one layer's passes
  double cp_intra_bytes_per_layer = 0, cp_inter_bytes_per_layer = 0; // what it moves inside nodes and between them
  double activation_bytes = 0; // sent to the next stage per microbatch by each TP rank
  double gather_s = 0;         // the receiver's all-gather of a scattered activation (0: none)
};

/** The pieces of `params`' model cut by `parallel` (its tp, cp, cp_comm and sequence parallelism). */
StagePieces price_stage_pieces(const TrainingParams& params, const KernelCostModel& cost, const PlatformSpec& platform,
                               const ParallelLayout& parallel);

} // namespace cs
