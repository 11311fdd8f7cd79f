// Framework profiles: what a training stack adds around a model's GEMMs and attention, and how it overlaps
// communication. Megatron-LM (2021), Megatron-Core and PyTorch FSDP differ in fused kernels, gradient dtypes and
// buffers, the optimizer step's traffic, per-kernel launch gaps and when gradients are reduced.
#pragma once

#include "base/yaml_reader.hpp"
#include "models/parallel/parallel_layout.hpp"
#include "models/transformer/optimizer_precision.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cs {

/** When data-parallel gradients are reduced. */
enum class GradientOverlap {
  DURING_BACKWARD, // in buckets that close as the last backward pass of each stage produces them (PyTorch DDP)
  AFTER_BACKWARD,  // once a stage's last backward pass is done, in equal buckets (Megatron's local DDP)
};

/** One Transformer Engine userbuffers overlap (an entry of its ub_cfgs, by layer name): how a tensor-parallel
 *  collective shares the GPU with the GEMM beside it under tp_comm_overlap. */
struct UbOverlap {
  std::string method = "ring_exchange"; // ring_exchange: point-to-point chunks on the copy engines; pipeline: chunked
                                        // collectives on SM kernels; bulk: one whole collective on SM kernels
  int num_sm = 1;                       // SMs its communication kernels take
  bool set_sm_margin = false;           // the GEMM is launched without those SMs (cuBLASLt's SM count target)
};

/** Transformer Engine's userbuffers layer names: the GEMM each overlaps (fprop, dgrad, wgrad of the QKV, attention
 *  output, first and second MLP projections). */
const std::vector<std::string>& ub_layer_names();

/** Transformer Engine's default for a layer (initialize_ub, TE >= 2.0): ring_exchange on one SM, or 16 SMs with a
 *  margin for pipeline and bulk. */
UbOverlap te_default_overlap(const std::string& layer);

struct FrameworkProfile {
  std::string name = "megatron-core";
  std::string description; // what the built-in profile is, for `clustersim list kinds`
  // Kernels.
  bool fused_bias_gelu = true;        // bias + GeLU in one pass (Megatron); two passes in eager PyTorch
  bool fused_bias_dropout_add = true; // bias + dropout + residual add in one pass (Megatron)
  bool fused_rmsnorm = true; // RMSNorm in one kernel each way (Transformer Engine, Apex, torch.compile); false: PyTorch
                             // eager's composite (upcast, square, mean, rsqrt, scale, downcast, weight)
  bool fused_swiglu = true;  // SiLU and the gated product in one kernel; false: eager's silu, then a multiply
  bool repeat_kv = false;    // grouped-query keys and values copied to every query head before attention (torchtitan's
                             // and Hugging Face's eager repeat_kv)
  bool fused_norm_linear = false; // the norm before the QKV and first MLP projections runs inside Transformer Engine's
                                  // LayerNormLinear (Megatron-Core's TE spec): under delayed FP8 scaling it casts too
  bool fused_rope = true;         // rotary embedding in one pass each way (Megatron-Core apply_rope_fusion, Transformer
                          // Engine's kernel; torch.compile); false: Megatron's and Hugging Face's unfused passes
  double dropout = 0.1;                     // hidden and attention dropout probability; 0 = no dropout kernels
  bool attention_layout_copies = false;     // q, k, v and their gradients copied into the attention kernel's layout
  bool linear_bias_in_gemm = true;          // a linear layer's own bias is added in the GEMM's epilogue; false: by a
                                            // separate pass over the output (PyTorch <= 1.12 F.linear on 3-D input)
  double cross_entropy_forward_bytes = 30;  // per logit: upcast to fp32 and the unfused softmax passes
  double cross_entropy_backward_bytes = 22; // per logit: softmax minus one-hot, scale, cast back
  // Megatron-Core's --cross-entropy-loss-fusion with --cross-entropy-fusion-impl: "none" prices the two byte counts
  // above; "native" (its jit-fused vocab-parallel loss) and "te" (Transformer Engine's Triton kernels) their passes.
  std::string cross_entropy_fusion = "none";
  // Gradients.
  std::string grad_accumulation = "none";    // "fp32": each microbatch's gradient is added to an fp32 main_grad
                                             // (Megatron-LM 2021); "none": accumulated in place in the model's dtype
  bool gradient_accumulation_fusion = false; // the weight-gradient GEMM accumulates into main_grad (Megatron-Core,
                                             // --gradient-accumulation-fusion): no separate kernel
  std::string reduce_dtype;                  // dtype gradients are reduced in ("" = the model's)
  bool grad_cast_predivide = false; // FSDP: each unsharded gradient is cast to the reduce dtype and pre-divided
  GradientOverlap overlap = GradientOverlap::DURING_BACKWARD;
  bool reduce_every_microbatch = false; // FSDP without no_sync: every microbatch reduce-scatters its gradients
  // Under ZeRO-3 with pp > 1 a stage gathers its parameters once a step and keeps them, accumulating unsharded
  // gradients in the reduce dtype until its last backward reduce-scatters them (torchtitan's FSDP2 under
  // torch.distributed.pipelining: reshard_after_forward off with PP, gradient sync only on the last backward).
  bool pipeline_keeps_unsharded = false;
  // Under ZeRO-3 the parameter shards are the fp32 master weights the optimizer updates, cast to the model's dtype only
  // when gathered (PyTorch FSDP's mixed precision), not a 16-bit shard beside the optimizer's master copy.
  bool sharded_params_are_master = false;
  // Under an FP8 recipe the GEMM weights are kept as FP8 parameters and gathered in FP8 (Megatron-Core's
  // --fp8-param-gather, Megatron-Bridge's mixed_precision.fp8_param_gather; torchao's enable_fsdp_float8_all_gather):
  // ZeRO's parameter gathers move one byte a GEMM weight, and no 16-bit copy is kept beside the FP8 one.
  bool fp8_param_gather = false;
  double optimizer_bytes_per_parameter = 58; // mixed-precision Adam: unscale and inf check, norm, clip, Adam, copy
  double optimizer_flops_per_parameter = 15;
  // Pipeline parallelism.
  bool p2p_blocking = true;             // the sender waits for its p2p send before its next op (Megatron synchronises)
  bool overlap_p2p_comm = false;        // with virtual stages the sends do not block (Megatron-Core overlap_p2p_comm)
  bool pipeline_scatter_gather = false; // without sequence parallelism each TP rank sends 1/tp of the activation and
                                        // the receivers all-gather it (Megatron-LM 2021); else each sends it whole
  // Host and SMs.
  double kernel_gap_s = 0;      // host time to launch one kernel; a shorter kernel leaves the GPU waiting
  double comm_sm_fraction = 0;  // share of a GPU's compute that communication kernels take while they run
  bool tp_comm_overlap = false; // TP collectives pipelined with their GEMMs (TE userbuffers, --tp-comm-overlap)
  // Under tp_comm_overlap, the SMs each userbuffers overlap takes from its GEMM, by ub_layer_names() (empty: a stack
  // whose overlap takes none, or not Transformer Engine's).
  std::map<std::string, UbOverlap> tp_overlap;
  // Megatron's asynchronous TP communication in backward (--async-tensor-model-parallel-allreduce, on by default
  // since 2021-09): a column-parallel layer's input-gradient all-reduce, or under sequence parallelism its input's
  // re-gather and the gradient's reduce-scatter, run beside its own GEMMs instead of after them.
  bool async_tensor_model_parallel_allreduce = false;
  bool moe_grouped_gemm = false; // a GPU's routed experts run as one grouped GEMM each (--moe-grouped-gemm)
  bool overlap_moe_expert_parallel_comm = false; // combined 1F1B: one microbatch's all-to-alls under another's compute
  bool moe_shared_expert_overlap = false;        // shared experts computed beside the dispatch and combine
  bool delay_wgrad_compute = false;       // the experts' weight gradients run beside the dispatch's gradient all-to-all
  OptimizerPrecision optimizer_precision; // Megatron-Core's precision-aware optimizer (off: fp32 state)

  /** Bytes the loss moves per logit, forward and backward, for logits of `logit_bytes` each. */
  std::pair<double, double> cross_entropy_bytes(double logit_bytes) const;
  /** Bytes per logit the loss keeps for its backward: fp32 probabilities, or (te) the logits, recomputed from. */
  double cross_entropy_kept_bytes(double logit_bytes) const { return cross_entropy_fusion == "te" ? logit_bytes : 4; }
  /** Whether a ZeRO-3 pipeline stage under `parallel` is gathered once a step and kept, its gradients reduced once
   *  (pipeline_keeps_unsharded, where there is a pipeline and a group to shard over). */
  bool keeps_stages_gathered(const ParallelLayout& parallel) const
  {
    return pipeline_keeps_unsharded && parallel.zero >= 3 && parallel.pp > 1 && parallel.dp * parallel.cp > 1;
  }
  std::string reduce_dtype_for(const std::string& model_dtype) const
  {
    return reduce_dtype.empty() ? model_dtype : reduce_dtype;
  }
  /** The dtype of the resident gradient buffer when it is not sharded: fp32 (Megatron's main_grad) or the model's.
   *  A buffer ZeRO-2/3 shards holds each shard in the reduce dtype (the reduce-scatter's output). */
  std::string main_grad_dtype(const std::string& model_dtype) const
  {
    return grad_accumulation == "fp32" ? "fp32" : model_dtype;
  }
};

/** The built-in profiles by name: megatron (Megatron-LM as in its SC'21 runs), megatron-core (today's Megatron-Core),
 *  fsdp (PyTorch FSDP with bf16 mixed precision, as llm-foundry runs it), torch-eager (the same without a compiler:
 *  torchtitan's Llama in PyTorch eager). */
const std::vector<FrameworkProfile>& builtin_frameworks();

/** Reads `workload.framework`: a built-in name, or {name: <built-in>, <field>: <value>, ...} to change some fields. */
void read_framework(ObjectReader& parent, FrameworkProfile& profile);

} // namespace cs
