// Where a training iteration's compute comes from: per virtual pipeline stage, the cost of its passes for one
// microbatch on one tensor-parallel rank, the parameters it holds and the activations it sends on. Transformer
// layers and generic layer graphs are the sources (an MoE layer source plugs in the same way).
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/memory_footprint.hpp"
#include "models/transformer/pass_cost.hpp"
#include "platform/platform_spec.hpp"
#include "policies/pipeline/stage_map.hpp"
#include "workloads/training/stage_partition.hpp"
#include "workloads/training/stage_pieces.hpp"
#include "workloads/training/training_params.hpp"

#include <functional>
#include <string>
#include <vector>

namespace cs {

/** What an MoE policy makes a device hold beyond a plain layer's experts and routed tokens. */
struct MoeMemoryUse {
  double buffer_scale = 1; // routed-token activations held, relative to an unpipelined MoE layer (MPipeMoE)
  int extra_slots = 0;     // expert slots per layer beyond experts / ep (FlexMoE's replicas)
};

/** A piece of a stage that can run as one task: a layer, the embedding, the output head. Times are for one
 *  microbatch on one tensor-parallel rank and include that rank's blocking TP collectives. */
struct Segment {
  std::string name; // "layer", "embedding", "head"
  int layer = -1;
  double forward_s = 0;
  double backward_s = 0;       // the whole backward pass: input and weight gradients (and recomputation)
  double weight_s = 0;         // the weight-gradient part of backward_s
  double params = 0;           // parameters on this TP rank
  bool keeps_gathered = false; // ZeRO-3: its parameters stay gathered from its forward to its backward (the head)
  /** Added to its backward when the pass reduces gradients as it goes (data-parallel buckets during backward): the
   *  reduction of the segment after it in forward order runs beside it and takes SMs and bandwidth. */
  double beside_reduce_s = 0;
  /** An MoE layer: the times above are its dense part (attention, router, permutations, shared experts); its
   *  all-to-alls and routed experts are emitted per step by the builder (workloads/training/moe_emitter.hpp). */
  bool moe = false;
  double expert_params = 0; // of `params`, the routed experts' (synchronised over the expert-data-parallel group)
  double fp8_params = 0;    // of `params` less the experts', the GEMM weights an FP8 recipe runs (0 without one)
  /** Of forward_s and backward_s, the shared experts' when they run beside the all-to-alls
   *  (framework.moe_shared_expert_overlap; 0 otherwise). */
  double shared_forward_s = 0, shared_backward_s = 0;
};

/** One virtual stage (a model chunk on one device). Totals are summed by the source (a task of a whole pass lasts
 *  exactly this); segments, in forward order, are for passes that run piece by piece. */
struct StageCost {
  double forward_s = 0;
  double backward_s = 0;
  double weight_s = 0;
  double params = 0;           // on this TP rank
  double expert_params = 0;    // of those, routed experts' (synchronised over the expert-data-parallel group)
  double fp8_weights = 0;      // of those, the GEMM weights an FP8 recipe casts once per step
  double activation_bytes = 0; // sent to the next virtual stage (and its gradient back); 0 = no transfer
  std::string model;           // the cost model that answered (for traces); "" = given
  std::vector<Segment> segments;
  // Stage DAGs (graph pipelines, one stage per device): the stages this one feeds and the bytes each edge carries
  // per microbatch. Left empty on every stage, the stages form a chain with activation_bytes between neighbours.
  std::vector<int> successors;
  std::vector<double> successor_bytes;

  /** The time of `pass` (0 forward, 1 whole backward, 2 input gradient, 3 weight gradient). */
  double seconds(int pass) const;
};

/** A model cut into pipeline stages, with what the rest of training needs to know about it. */
struct StageSet {
  std::vector<StageCost> stages; // in model order; the map says which device's chunk holds each
  StageMap map;
  std::vector<int> layers_per_stage;
  double parameters = 0;                   // the whole model
  double model_flops_per_iteration = 0;    // the Megatron count (three passes)
  double hardware_flops_per_iteration = 0; // what the GPUs do, recomputation included
  double tp_seconds_per_layer = 0;         // TP collectives' time in one layer's passes of one microbatch (exposed)
  double tp_bytes_per_layer = 0;           // the bytes those collectives move, over all ranks of one TP group
  double cp_seconds_per_layer = 0;         // CP key/value exchange in one layer's passes of one microbatch (exposed)
  double cp_intra_bytes_per_layer = 0;     // the bytes that exchange moves inside nodes, over all ranks of one CP group
  double cp_inter_bytes_per_layer = 0;     // and between nodes
  /** Memory of device d, holding `in_flight` microbatch-chunks of activations at its peak; MoE layers hold
   *  `moe_buffer_scale` of an unpipelined layer's routed-token activations (the MoE policy's, 1 otherwise). */
  std::function<MemoryFootprint(int device, int in_flight, const MoeMemoryUse& moe)> memory;
};

/** The stages' pass totals with each MoE layer's routed experts added at `experts` (their time on one GPU for one
 *  microbatch): the stage costs leave them to the builder, which emits them per rank as routed. */
std::vector<StageCost> with_routed_experts(const StageSet& set, const PieceTimes& experts);

/** How the stages are cut. */
struct StageShape {
  ParallelLayout parallel;      // tp splits the layers; pp devices; dp (ZeRO shards), ep and etp for memory
  StageMap map;                 // the schedule's placement of virtual stages on the pp devices
  bool graph_pipeline = false;  // layer graphs: cut by branch into a stage DAG
  bool price_dp_beside = false; // price the data-parallel group's communication beside the passes it slows
};

/** A transformer's stages: Megatron's split over tp ranks (the TP collectives priced by the tuner's closed form and
 *  folded into the passes; with sequence parallelism a reduce-scatter and an all-gather per block), layers per stage
 *  by parallel.stage_layers, else even or balanced; the embedding on the first stage, the vocabulary-parallel head on
 *  the last. Throws std::invalid_argument when the layers do not divide into the stages. */
StageSet transformer_stages(const TrainingParams& params, const KernelCostModel& cost, const PlatformSpec& platform,
                            const StageShape& shape);
/** The same from pieces priced beforehand by price_stage_pieces for `shape.parallel` (a search that cuts one model
 *  many ways prices its pieces once). */
StageSet transformer_stages(const TrainingParams& params, const PlatformSpec& platform, const StageShape& shape,
                            const StagePieces& pieces);

/** A layer graph's stages: each layer one roofline-costed kernel of its flops and bytes for `micro` samples (split
 *  over tp ranks, with one closed-form all-reduce of its output per pass [recon]); backward twice its forward, half
 *  of it the weight gradient. Chain schedules cut the layers contiguously in file order, the graph pipeline by
 *  branch into a stage DAG. */
StageSet layer_graph_stages(const TrainingParams& params, const KernelCostModel& cost, const PlatformSpec& platform,
                            const StageShape& shape);

/** The parameters device `device` updates in its optimizer step: those of its chunks; `sharded` (ZeRO), its 1/dp
 *  shard of the dense ones and its 1/(dp / ep_replicas) shard of the routed experts' over their expert-data-parallel
 *  group. */
double optimizer_parameters(const StageSet& set, int device, const ParallelLayout& parallel, bool sharded);
/** The GEMM weights an FP8 recipe casts once per step on `device` (over its chunks), on its TP rank. */
double fp8_weights(const StageSet& set, int device);

/** What ZeRO's parameter gathers move per element: a parameter in the model's dtype, and a GEMM weight an FP8 recipe
 *  runs, one FP8 byte under framework.fp8_param_gather (one layout and its scales), else the model's dtype too. */
struct GatherElementBytes {
  double element = 2, fp8 = 2;
};
GatherElementBytes gather_element_bytes(const ModelParams& model, const FrameworkProfile& framework);
/** Bytes a gather of `seg`'s dense parameters moves (its routed experts apart: they are all GEMM weights, at `fp8`). */
double dense_gather_bytes(const Segment& seg, const GatherElementBytes& b);
/** The same for every segment of stage `s`. */
double dense_gather_bytes(const StageCost& s, const GatherElementBytes& b);

/** The all-gather of one micro x seq / cp x hidden activation over a TP group inside a node (closed form). */
double tp_gather_seconds(const ModelParams& model, int micro, int tp, const PlatformSpec& platform, int cp = 1);

/** One of Megatron's blocking TP collectives after a block pass (micro x seq / cp x hidden activations over a TP
 *  group inside a node), by the tuner's closed form: an all-reduce, or a reduce-scatter and an all-gather with
 *  sequence parallelism. 0 when tp = 1. */
double tp_block_collective_seconds(const ModelParams& model, int micro, int tp, bool sequence_parallel,
                                   const PlatformSpec& platform, int cp = 1);

/** One layer's TP collectives as the framework issues them: tp_block_collective_seconds in both passes, or under
 *  Megatron's asynchronous backward communication the backward's blocking and asynchronous parts. */
TpCollectives tp_layer_collectives(const ModelParams& model, int micro, int tp, bool sequence_parallel,
                                   const PlatformSpec& platform, int cp, const FrameworkProfile& fw);

} // namespace cs
