#include "models/transformer/framework.hpp"

#include "models/transformer/userbuffers_configs.hpp"

#include <fmt/format.h>

namespace cs {

const std::vector<std::string>& ub_layer_names()
{
  static const std::vector<std::string> names{"qkv_fprop", "qkv_dgrad", "qkv_wgrad", "proj_fprop", "proj_dgrad",
                                              "fc1_fprop", "fc1_dgrad", "fc1_wgrad", "fc2_fprop",  "fc2_dgrad"};
  return names;
}

// transformer_engine/pytorch/module/base.py, initialize_ub (TE 2.x): the all-gathers before the QKV and first MLP
// projections' forward and the second ones' input gradients exchange chunks point to point on the copy engines
// (ring_exchange, one SM); the reduce-scatters after the output projections' forward are chunked collectives
// (pipeline); the backward's re-gather and input-gradient reduce-scatter run whole beside the QKV and first MLP
// projections' data- and weight-gradient GEMMs (bulk). Pipeline and bulk take 16 SMs, and the GEMM is launched
// without them. (TE 1.x's defaults were the same but for no margin.)
UbOverlap te_default_overlap(const std::string& layer)
{
  if (layer == "proj_fprop" || layer == "fc2_fprop")
    return UbOverlap{"pipeline", 16, true};
  if (layer == "qkv_dgrad" || layer == "qkv_wgrad" || layer == "fc1_dgrad" || layer == "fc1_wgrad")
    return UbOverlap{"bulk", 16, true};
  return UbOverlap{"ring_exchange", 1, false};
}

const std::vector<FrameworkProfile>& builtin_frameworks()
{
  static const std::vector<FrameworkProfile> profiles = [] {
    // Megatron-LM 2021 (Narayanan et al., SC'21; the code of that time): fused bias-GeLU and bias-dropout-add,
    // dropout 0.1, fp32 main_grad accumulation per microbatch, the local DDP reducing every gradient after the
    // backward pass, fp16 gradients on the wire, Adam over fp32 main parameters.
    FrameworkProfile megatron;
    megatron.name = "megatron";
    megatron.description = "Megatron-LM as in its SC'21 runs: fp32 main_grad, gradients reduced after backward";
    megatron.grad_accumulation = "fp32";
    megatron.overlap = GradientOverlap::AFTER_BACKWARD;
    megatron.pipeline_scatter_gather = true;
    megatron.kernel_gap_s = 4e-6;
    megatron.comm_sm_fraction = 0.15;
    // Its QKV projection keeps its bias (the others hand theirs to the fused bias-GeLU and bias-dropout-add), and
    // PyTorch 1.8's F.linear on a 3-D input runs matmul, then add_ over the output.
    megatron.linear_bias_in_gemm = false;
    // Megatron-Core: the same kernels, gradients reduced in buckets as backward produces them; pipeline sends carry
    // whole activations (sequence parallelism shards them instead). Its DDP's default grad_reduce_in_fp32 = false:
    // main_grad buffers in the model's dtype, the weight-gradient GEMM accumulating into them (gradient accumulation
    // fusion), reduced in that dtype (Megatron-Bridge's default recipes set it true; its performance recipes false).
    FrameworkProfile core = megatron;
    core.name = "megatron-core";
    core.description = "today's Megatron-Core with Transformer Engine: fused kernels, bucketed reductions, userbuffers";
    core.grad_accumulation = "none";
    core.gradient_accumulation_fusion = true; // Megatron-LM's and Megatron-Bridge's default wherever TE is installed
    core.overlap = GradientOverlap::DURING_BACKWARD;
    core.pipeline_scatter_gather = false;
    core.linear_bias_in_gemm = true; // Transformer Engine adds it in the GEMM epilogue
    core.moe_grouped_gemm = true;    // the MoE recipes' --moe-grouped-gemm (TE's grouped GEMM)
    // Interleaved schedules overlap their pipeline sends with compute (Megatron-Core's overlap_p2p_comm), which NeMo's
    // and Megatron-Bridge's communication-overlap settings turn on whenever vp > 1 (batch_p2p_comm otherwise).
    core.overlap_p2p_comm = true;
    // Its linear layers (Megatron-Core's and Transformer Engine's) issue the backward's TP collectives asynchronously.
    core.async_tensor_model_parallel_allreduce = true;
    core.fused_norm_linear = true; // TELayerNormColumnParallelLinear for linear_qkv and linear_fc1
    // Its --tp-comm-overlap is Transformer Engine's userbuffers, with TE's defaults unless a recipe gives its own.
    core.tp_overlap = userbuffers_configs().at("transformer_engine_2_defaults");
    // PyTorch FSDP FULL_SHARD with the "DEFAULT" mixed precision of llm-foundry's published benchmark tables (their
    // "MP Mode" column): bf16 compute, each unsharded gradient cast to fp32 and pre-divided, then reduce-scattered in
    // fp32, every microbatch; eager kernels (bias and dropout unfused; MPT has neither), q/k/v layout copies around
    // flash attention, cross-entropy under autocast in fp32, Adam on fp32 shards. reduce_dtype: "" (the model's)
    // gives the "PURE" policy (gradients reduced in bf16, pre-divided in place).
    FrameworkProfile fsdp;
    fsdp.name = "fsdp";
    fsdp.description = "PyTorch FSDP with bf16 mixed precision, as llm-foundry runs it";
    fsdp.fused_bias_gelu = false;
    fsdp.fused_bias_dropout_add = false;
    fsdp.dropout = 0;
    fsdp.attention_layout_copies = true;
    fsdp.cross_entropy_forward_bytes = 22;
    fsdp.cross_entropy_backward_bytes = 18;
    fsdp.grad_accumulation = "none";
    fsdp.reduce_dtype = "fp32";
    fsdp.grad_cast_predivide = true;
    fsdp.overlap = GradientOverlap::DURING_BACKWARD;
    fsdp.reduce_every_microbatch = true;
    fsdp.pipeline_keeps_unsharded = true;
    fsdp.sharded_params_are_master = true;
    fsdp.optimizer_bytes_per_parameter = 52;
    fsdp.kernel_gap_s = 8e-6;
    fsdp.comm_sm_fraction = 0.2;
    fsdp.p2p_blocking = false;
    // PyTorch eager, as torchtitan writes a Llama without torch.compile (its late-2024 model code, FSDP2 with bf16
    // parameters): RMSNorm composed of eager ops, SiLU then the product, the complex rotation unfused, the grouped
    // keys and values repeated to every query head before SDPA; the rest as fsdp. [recon: from torchtitan's
    // models/llama/model.py of that time; the passes are counted in layer_kernels.cpp and mlp_swiglu.cpp]
    FrameworkProfile eager = fsdp;
    eager.name = "torch-eager";
    eager.description = "fsdp without a compiler: torchtitan's Llama in PyTorch eager (unfused norms, SwiGLU, RoPE)";
    eager.fused_rmsnorm = false;
    eager.fused_swiglu = false;
    eager.fused_rope = false;
    eager.repeat_kv = true;
    return std::vector<FrameworkProfile>{megatron, core, fsdp, eager};
  }();
  return profiles;
}

std::pair<double, double> FrameworkProfile::cross_entropy_bytes(double e) const
{
  // native (megatron/core/fusions/fused_cross_entropy.py): the logits upcast to fp32 with their row max (e read, 4
  // written), exp in place (4 + 4), the row sum (4), the division in place (4 + 4); backward the in-place scaling
  // (4 + 4) and the cast back (4 + e). te (transformer_engine/pytorch/triton/cross_entropy.py): one online-softmax
  // pass reads the logits (e), the loss reads per-row sums only; backward reads them again and writes the gradient
  // in place (e + e).
  if (cross_entropy_fusion == "native")
    return {e + 24, 12 + e};
  if (cross_entropy_fusion == "te")
    return {e, 2 * e};
  return {cross_entropy_forward_bytes, cross_entropy_backward_bytes};
}

// The MoE kernels' and overlaps' fields of `framework:`.
static void read_moe_fields(ObjectReader& r, FrameworkProfile& framework)
{
  r.field("moe_grouped_gemm", framework.moe_grouped_gemm,
          "a GPU's routed experts run each of their GEMMs as one grouped GEMM over all its experts' tokens (Megatron-"
          "Core --moe-grouped-gemm; the megatron-core profile's default), not one GEMM per expert")
      .field("overlap_moe_expert_parallel_comm", framework.overlap_moe_expert_parallel_comm,
             "Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm): each backward runs paired with the "
             "next forward of another microbatch, their kernels alternating so that one's expert all-to-alls run "
             "under the other's compute (needs ep > 1, and vpp > 1 when pp > 1)")
      .field("delay_wgrad_compute", framework.delay_wgrad_compute,
             "Megatron-Core --delay-wgrad-compute: in a whole backward of an MoE layer the routed experts' weight "
             "gradients wait until the dispatch's gradient all-to-all is sent and run beside it (needs "
             "overlap_moe_expert_parallel_comm)")
      .field("moe_shared_expert_overlap", framework.moe_shared_expert_overlap,
             "Megatron-Core --moe-shared-expert-overlap: the shared experts' forward runs beside the dispatch "
             "all-to-all and their backward beside the combine's gradient (needs shared experts and the alltoall, "
             "deepep or hybridep dispatcher)");
}

// How gradients are accumulated and reduced, and how ZeRO's parameters are kept and gathered.
static void read_gradient_fields(ObjectReader& r, FrameworkProfile& framework)
{
  r.choice("grad_accumulation", framework.grad_accumulation, {"fp32", "none"},
           "fp32: each microbatch's gradients are added to fp32 main_grad buffers (4 bytes a parameter); none: "
           "accumulated in place in the model's dtype")
      .field("gradient_accumulation_fusion", framework.gradient_accumulation_fusion,
             "the weight-gradient GEMM adds into main_grad itself (Megatron --gradient-accumulation-fusion): no "
             "separate accumulation kernel")
      .choice("reduce_dtype", framework.reduce_dtype, {"", "fp32", "bf16", "fp16"},
              "dtype gradients are reduced in (empty: the model's)")
      .field("grad_cast_predivide", framework.grad_cast_predivide,
             "each unsharded gradient is cast to the reduce dtype (if it differs) and pre-divided")
      .choice(
          "overlap", framework.overlap,
          {{"during-backward", GradientOverlap::DURING_BACKWARD}, {"after-backward", GradientOverlap::AFTER_BACKWARD}},
          "when data-parallel gradients are reduced: during-backward (in buckets, as the last backward pass "
          "produces them) | after-backward (once the backward pass is done)")
      .field("reduce_every_microbatch", framework.reduce_every_microbatch,
             "every microbatch reduce-scatters its gradients (FSDP without no_sync, DeepSpeed's ZeRO-2): only then can "
             "ZeRO-2 shard gradients accumulated over microbatches")
      .field("pipeline_keeps_unsharded", framework.pipeline_keeps_unsharded,
             "under ZeRO-3 with pp > 1 each stage gathers its parameters once a step and keeps them, and accumulates "
             "unsharded gradients in the reduce dtype until its last backward reduce-scatters them (torchtitan's "
             "FSDP2 with torch.distributed.pipelining; its fsdp_reshard_after_forward = \"always\" turns it off)")
      .field("sharded_params_are_master", framework.sharded_params_are_master,
             "under ZeRO-3 the parameter shards are the optimizer's fp32 master weights, cast to the model's dtype "
             "only when gathered (PyTorch FSDP's mixed precision): no 16-bit shard beside them")
      .field("fp8_param_gather", framework.fp8_param_gather,
             "under an FP8 recipe the GEMM weights are FP8 parameters, gathered in FP8 (Megatron-Core "
             "--fp8-param-gather; torchao's enable_fsdp_float8_all_gather): ZeRO's parameter all-gathers move one "
             "byte a GEMM weight, and no 16-bit copy sits beside the FP8 one");
}

// Megatron-Core's DistributedDataParallelConfig.grad_reduce_in_fp32, in the words users type: fp32 main_grad buffers
// reduced in fp32, or buffers and reductions in the model's dtype. grad_accumulation and reduce_dtype, read after it,
// can still change either half.
static void read_grad_reduce_in_fp32(ObjectReader& r, FrameworkProfile& framework)
{
  bool fp32 = framework.grad_accumulation == "fp32" && framework.reduce_dtype == "fp32";
  const bool given = r.has("grad_reduce_in_fp32");
  r.field("grad_reduce_in_fp32", fp32,
          "Megatron-Core's grad_reduce_in_fp32: true, fp32 main_grad buffers (4 bytes a parameter) accumulated and "
          "reduced in fp32 (grad_accumulation: fp32, reduce_dtype: fp32); false, both in the model's dtype "
          "(grad_accumulation: none, reduce_dtype: the model's)");
  if (given) {
    framework.grad_accumulation = fp32 ? "fp32" : "none";
    framework.reduce_dtype = fp32 ? "fp32" : "";
  }
}

// `framework.tp_overlap`: Transformer Engine's ub_cfgs, an entry per layer name, each changing the profile's entry
// (or TE's default) in the keys it gives.
static void read_tp_overlap(ObjectReader& r, FrameworkProfile& framework)
{
  const char* help = "under tp_comm_overlap, the SMs each Transformer Engine userbuffers overlap takes from its GEMM: "
                     "a map by TE's layer names (its ub_cfgs), or the name of one of Megatron-Bridge's userbuffers_* "
                     "or NeMo-Framework-Launcher's ub_cfg_* configurations";
  std::vector<std::string> names;
  for (const auto& [name, layers] : userbuffers_configs())
    names.push_back(name);
  if (!r.describing())
    if (auto node = r.raw("tp_overlap", "name or map", help); node && !node->IsMap()) {
      std::string name; // a named configuration: every layer's entry
      r.choice("tp_overlap", name, names, help);
      framework.tp_overlap = userbuffers_configs().at(name);
      return;
    }
  ObjectReader ub = r.child("tp_overlap", help);
  std::string base;
  ub.choice("config", base, names, "a named configuration the layers given beside it change");
  if (!base.empty())
    framework.tp_overlap = userbuffers_configs().at(base);
  for (const auto& layer : ub_layer_names()) {
    const auto it = framework.tp_overlap.find(layer);
    UbOverlap o = it != framework.tp_overlap.end() ? it->second : te_default_overlap(layer);
    const bool given = ub.has(layer.c_str());
    ObjectReader e = ub.child(layer.c_str(), "one layer's overlap (the GEMM it names: fprop, dgrad or wgrad)");
    if (given && !e.describing())
      if (auto node = ub.raw(layer.c_str(), "map", ""); node && !node->IsMap())
        ub.fail_at(layer.c_str(), "'" + layer + "' must be a map {method, num_sm, set_sm_margin}");
    e.choice("method", o.method, {"ring_exchange", "pipeline", "bulk"},
             "ring_exchange: chunks sent point to point on the copy engines; pipeline: chunked collectives on SM "
             "kernels; bulk: the whole collective on SM kernels beside the GEMM")
        .field("num_sm", o.num_sm, "SMs its communication kernels take")
        .field("set_sm_margin", o.set_sm_margin,
               "the GEMM is launched without those SMs for all of its time; false: it loses them while the "
               "collective runs (ring_exchange: not at all)");
    e.finish();
    if (e.describing())
      continue;
    e.require_non_negative("num_sm", o.num_sm);
    if (given)
      framework.tp_overlap[layer] = o;
  }
  ub.finish();
}

// How `framework:`'s tensor-parallel collectives meet the GEMMs beside them.
static void read_tensor_parallel_fields(ObjectReader& r, FrameworkProfile& framework)
{
  r.field("tp_comm_overlap", framework.tp_comm_overlap,
          "tensor-parallel all-gathers and reduce-scatters split into chunks and pipelined with the GEMMs beside "
          "them (Transformer Engine's userbuffers; Megatron --tp-comm-overlap): only a chunk of each shows")
      .field("async_tensor_model_parallel_allreduce", framework.async_tensor_model_parallel_allreduce,
             "in backward, a column-parallel layer's TP collectives (its input gradient's all-reduce; under sequence "
             "parallelism its input's re-gather and the gradient's reduce-scatter) run beside its GEMMs, not after "
             "them (Megatron --async-tensor-model-parallel-allreduce; true in megatron-core)");
  read_tp_overlap(r, framework);
}

// What a compiler or hand-written kernels fuse, and PyTorch eager runs pass by pass.
static void read_eager_fields(ObjectReader& r, FrameworkProfile& framework)
{
  r.field("fused_rmsnorm", framework.fused_rmsnorm,
          "RMSNorm in one kernel each way; false: PyTorch eager's composite (upcast to fp32, square, mean, rsqrt, "
          "scale, downcast, weight), 36 bytes an element forward and 84 backward in bf16 against 4 and 6, and its fp32 "
          "upcast kept for backward")
      .field("fused_swiglu", framework.fused_swiglu,
             "SiLU and the gated product in one kernel; false: eager's silu, then a multiply (the SiLU output kept)")
      .field("repeat_kv", framework.repeat_kv,
             "grouped-query keys and values copied to every query head before attention, and the copies' gradients "
             "summed back (torchtitan's and Hugging Face's eager repeat_kv); the copies are kept for backward")
      .field(
          "fused_norm_linear", framework.fused_norm_linear,
          "the norm before the QKV and first MLP projections runs inside Transformer Engine's LayerNormLinear "
          "(Megatron-Core's TE layer spec; true in megatron-core): under delayed FP8 scaling it writes its output in "
          "FP8 itself, so those linears have no input cast, only a transpose of the saved FP8 input in backward")
      .field("fused_rope", framework.fused_rope,
             "rotary position embedding in one kernel each way (Megatron-Core apply_rope_fusion, on in Megatron-LM's "
             "arguments and Megatron-Bridge's providers; torch.compile); false: the unfused rotate-half passes");
}

// The loss's fields of `framework:`: its bytes per logit unfused, or which fused kernels run it.
static void read_loss_fields(ObjectReader& r, FrameworkProfile& framework)
{
  r.field("cross_entropy_forward_bytes", framework.cross_entropy_forward_bytes,
          "bytes moved per logit by the loss forward")
      .field("cross_entropy_backward_bytes", framework.cross_entropy_backward_bytes,
             "bytes moved per logit by the loss backward")
      .choice("cross_entropy_fusion", framework.cross_entropy_fusion, {"none", "native", "te"},
              "Megatron-Core --cross-entropy-loss-fusion and its --cross-entropy-fusion-impl: none prices the two byte "
              "counts above; native (the jit-fused loss, 26 and 14 bytes a bf16 logit) and te (Transformer Engine's "
              "Triton kernels, 2 and 4) their own passes");
}

void read_framework(ObjectReader& parent, FrameworkProfile& framework)
{
  std::vector<std::string> names;
  for (const auto& p : builtin_frameworks())
    names.push_back(p.name);
  const char* help =
      "training stack: a name (megatron, megatron-core, fsdp, torch-eager) or {name: ..., fields to change}";
  if (!parent.describing()) {
    auto node = parent.raw("framework", "name or map", help);
    if (node && !node->IsMap()) {
      parent.choice("framework", framework.name, names, help);
      for (const auto& p : builtin_frameworks())
        if (p.name == framework.name)
          framework = p;
      return;
    }
  }
  ObjectReader r = parent.child("framework", help);
  std::string name = framework.name;
  r.choice("name", name, names, "the built-in profile the other fields change");
  if (!r.describing())
    for (const auto& p : builtin_frameworks())
      if (p.name == name)
        framework = p;
  read_grad_reduce_in_fp32(r, framework);
  read_loss_fields(r, framework);
  read_eager_fields(r, framework);
  r.field("fused_bias_gelu", framework.fused_bias_gelu, "bias and GeLU in one kernel")
      .field("fused_bias_dropout_add", framework.fused_bias_dropout_add, "bias, dropout and residual add in one kernel")
      .field("dropout", framework.dropout, "dropout probability (0 = no dropout kernels)")
      .field("attention_layout_copies", framework.attention_layout_copies,
             "q, k, v (and their gradients) copied into the attention kernel's layout")
      .field("linear_bias_in_gemm", framework.linear_bias_in_gemm,
             "a linear layer's own bias is added in the GEMM epilogue (false: a separate pass over the output)")
      .field("optimizer_bytes_per_parameter", framework.optimizer_bytes_per_parameter,
             "bytes the mixed-precision optimizer step moves per parameter")
      .field("optimizer_flops_per_parameter", framework.optimizer_flops_per_parameter, "its FLOPs per parameter")
      .field("p2p_blocking", framework.p2p_blocking, "a pipeline stage waits for its send before its next op")
      .field("overlap_p2p_comm", framework.overlap_p2p_comm,
             "with virtual pipeline stages (vpp > 1) the sends run beside the next op instead of blocking it "
             "(Megatron-Core --overlap-p2p-communication; NeMo and Megatron-Bridge set it whenever vp > 1)")
      .field("pipeline_scatter_gather", framework.pipeline_scatter_gather,
             "TP ranks send 1/tp of each activation and the receivers all-gather it (without sequence parallelism)")
      .field("kernel_gap", framework.kernel_gap_s, "host time to launch one kernel (seconds)")
      .field("comm_sm_fraction", framework.comm_sm_fraction,
             "share of the GPU's compute that communication kernels take while they run");
  read_tensor_parallel_fields(r, framework);
  read_gradient_fields(r, framework);
  read_moe_fields(r, framework);
  read_optimizer_precision(r, framework.optimizer_precision);
  r.finish();
  r.require(framework.dropout >= 0 && framework.dropout < 1, "dropout", "dropout must be in [0, 1)");
  r.require_non_negative("cross_entropy_forward_bytes", framework.cross_entropy_forward_bytes);
  r.require_non_negative("cross_entropy_backward_bytes", framework.cross_entropy_backward_bytes);
  r.require_positive("optimizer_bytes_per_parameter", framework.optimizer_bytes_per_parameter);
  r.require_non_negative("optimizer_flops_per_parameter", framework.optimizer_flops_per_parameter);
  r.require_at_most("cross_entropy_forward_bytes", framework.cross_entropy_forward_bytes, 1000);
  r.require_at_most("cross_entropy_backward_bytes", framework.cross_entropy_backward_bytes, 1000);
  r.require_at_most("optimizer_bytes_per_parameter", framework.optimizer_bytes_per_parameter, 1000);
  r.require_at_most("optimizer_flops_per_parameter", framework.optimizer_flops_per_parameter, 1000);
  r.require_non_negative("kernel_gap", framework.kernel_gap_s);
  r.require(framework.comm_sm_fraction >= 0 && framework.comm_sm_fraction < 1, "comm_sm_fraction",
            "comm_sm_fraction must be in [0, 1)");
}

} // namespace cs
