// Memory per GPU of transformer training: weights, gradients, optimizer state, activations, buffers.
#pragma once

#include "models/parallel/parallel_layout.hpp"
#include "models/transformer/framework.hpp"
#include "models/transformer/model_params.hpp"

#include <map>
#include <string>

namespace cs {

/** Bytes per GPU, by what holds them. */
struct MemoryFootprint {
  double parameters = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double buffers = 0;
  double in_flight_microbatches = 1; // microbatches' worth of activations held at the peak
  double gathered_parameters = 0;    // of `parameters`, the gathered copy a pipelined ZeRO-3 stage keeps for the step
  double total() const { return parameters + gradients + optimizer + activations + buffers; }
  std::map<std::string, double> breakdown() const;
};

/** What decides what a GPU holds: the parallel layout and, for the most loaded device, what it runs and keeps. */
struct MemoryLayout {
  ParallelLayout parallel;           // degrees, ZeRO stage, sequence parallelism
  double in_flight_microbatches = 1; // activations held at the peak (1F1B: p - s on stage s; GPipe: m;
                                     // interleaved: chunk-microbatches over the chunks)
  double bucket_bytes = 0;           // communication buffer (gradient bucket)
  int layers_on_device =
      -1;              // layers on the most loaded device (0: only the embedding or the loss); -1 = ceil(layers / pp)
  bool dropout = true; // the framework applies dropout (its 1-byte masks are kept for backward)
  bool eager_rmsnorm = false; // each RMSNorm keeps its fp32 upcast for backward (PyTorch eager's composite)
  bool eager_swiglu = false;  // SwiGLU keeps its SiLU output too (eager's separate product)
  bool repeat_kv = false;     // attention keeps the keys and values repeated to every query head
  bool holds_head = false; // the device runs the output layer (always when pp = 1)
  // What the loss keeps for its backward, per logit: fp32 probabilities (unfused, and Megatron-Core's native fused
  // loss), or under Transformer Engine's fused loss the logits themselves (their dtype).
  double loss_bytes_per_logit = 4;
  int moe_layers_on_device = -1; // of layers_on_device, those with experts (-1: the model's share of them)
  double moe_buffer_scale = 1;   // routed-token activations held, relative to an unpipelined MoE layer (MPipeMoE)
  int extra_expert_slots = 0;    // expert slots per MoE layer beyond experts / ep (FlexMoE's replicas), each with one
                                 // expert's weights, gradients and optimizer state
  // Whether ZeRO-2/3 can shard the gradients: only when each microbatch reduce-scatters its own, or a step has one
  // microbatch. Accumulated over microbatches and reduced once a step, the whole buffer is resident until then.
  int accumulation_steps = 1;
  bool reduce_every_microbatch = false;
  // ZeRO-3 under a pipeline that keeps each stage gathered for the step (FrameworkProfile::pipeline_keeps_unsharded):
  // the stage's whole parameters resident in the model's dtype, its gradients accumulated whole (main_grad_bytes).
  bool keeps_unsharded = false;
  // ZeRO-3 whose parameter shards are the optimizer's master weights (FrameworkProfile::sharded_params_are_master).
  bool sharded_params_are_master = false;
  // Under an FP8 recipe, the GEMM weights kept as FP8 parameters and gathered in FP8 (FrameworkProfile::
  // fp8_param_gather): no 16-bit copy beside the FP8 one; a gathered stage or layer holds them at one FP8 byte.
  bool fp8_params = false;
  // Bytes per parameter of the gradient buffer: whole (Megatron's fp32 main_grad: 4) and as ZeRO-2/3 shards (the
  // reduce dtype); 0: the model's dtype.
  double main_grad_bytes = 0;
  double sharded_grad_bytes = 0;
  double dispatcher_buffer_bytes = 0; // the token dispatcher's own buffers (DeepEP's), held where MoE layers run
  // Full recomputation by groups or blocks (recompute_num_layers): the layer inputs kept (uniform) or the layers
  // recomputed (block) on the device, over its virtual stages; -1: from layers_on_device as one stage.
  int checkpoints_on_device = -1;
  int recomputed_layers_on_device = -1;
  // Copies of the model the pipeline holds (DualPipe: 2). The device's layers above count both; the copies' gradients
  // are reduced together, so ZeRO shards their state over the copies' group, copies x dp x cp ranks.
  int model_copies = 1;
  // Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm): a paired forward allocates each layer while the
  // backward beside it still holds one layer of its own, so the pair holds a layer beyond the chunks in flight.
  bool pair_holds_a_layer = false;
  OptimizerPrecision optimizer_precision; // the dtypes of the optimizer's state (Megatron-Core's precision-aware)
};

/** Mixed-precision Adam (Rajbhandari et al., ZeRO, SC'20): 2 bytes of weights per parameter (16-bit dtypes; 4 for
 *  fp32), the gradient buffer in its own dtype (layout.main_grad_bytes: Megatron's fp32 main_grad holds 4), 12 bytes
 *  of optimizer state (fp32 master weights, momentum, variance), each
 *  divided by dp where the ZeRO stage shards it. Activations per layer and microbatch follow Korthikanti et al.
 *  (MLSys'23, "Reducing Activation Recomputation"), for s tokens, b samples, h hidden, a heads, t tensor-parallel
 *  ranks: none s b h (10 + 24/t + 5 a s / (h t)), selective s b h (10 + 24/t); with sequence parallelism the
 *  10 becomes 10/t (34/t in all); full recomputation keeps each layer's input, 2 s b h (/t with sequence
 *  parallelism). Flash attention keeps no scores (the 5 a s / (h t) term goes; its output is already counted), and
 *  without dropout the two 1-byte masks (2 of the 10) go. Counts are for 16-bit activations and scale with the
 *  dtype. The device that runs the output layer also holds one microbatch's fp32 log-probabilities for the loss
 *  (4 s b V / t bytes). The most loaded pipeline stage (layers / pp) is the one counted. In MoE layers the GPU
 *  holds experts / ep of the routed experts (split over the tp ranks like the dense MLP), whose gradients and
 *  optimizer state ZeRO shards over the expert-data-parallel group (dp / ep); their activations are those of the
 *  top_k experts' MLPs plus the permuted copies of the routed tokens going to them (2 k s b h bytes; k s b h under an
 * FP8 recipe, whose grouped GEMM keeps only its input's FP8 copy). The copies coming back are not kept: Megatron-Core
 * applies the routing probabilities in the experts' activation (its fused weighted SwiGLU), so the combine is a plain
 * sum whose backward needs no saved tensor [recon: from Megatron-Core's experts and dispatchers, not a measurement]. */
MemoryFootprint transformer_memory(const ModelParams& model, int micro_batch, const MemoryLayout& layout);

/** What the framework's kernels keep: dropout masks, what the loss keeps a logit, eager kernels' extra copies. */
void apply_framework(MemoryLayout& layout, const FrameworkProfile& framework, const std::string& model_dtype);

} // namespace cs
