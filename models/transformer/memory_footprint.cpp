#include "models/transformer/memory_footprint.hpp"

#include "models/kernels/kernel.hpp"
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/mlp_kind.hpp"
#include "models/transformer/transformer.hpp"

#include <algorithm>
#include <cmath>

namespace cs {

std::map<std::string, double> MemoryFootprint::breakdown() const
{
  std::map<std::string, double> out{
      {"memory_parameters_bytes", parameters}, {"memory_gradients_bytes", gradients},
      {"memory_optimizer_bytes", optimizer},   {"memory_activations_bytes", activations},
      {"memory_buffers_bytes", buffers},       {"memory_in_flight_microbatches", in_flight_microbatches}};
  if (gathered_parameters > 0)
    out["memory_gathered_parameters_bytes"] = gathered_parameters;
  return out;
}

namespace {

// The activations one layer keeps, in units of s b h bytes, before the attention scores.
double held_units(const ModelParams& model, const MemoryLayout& layout, double t, bool sp)
{
  const double h = model.hidden;
  // Korthikanti et al.'s per-layer count in units of s b h bytes: 10 replicated under tensor parallelism (norm
  // inputs, the two block inputs, dropout masks) and 24 split (queries 2, keys 2, values 2, projection input 2,
  // GeLU input 8 and output 8), plus 5 a s / h for scores. Keys and values shrink with grouped-query attention;
  // SwiGLU keeps gate, up and product (6 f / h) where GeLU keeps two (4 f / h).
  // Eager SwiGLU keeps its SiLU output as well (2 f / h more); eager repeat_kv keeps keys and values as wide as the
  // queries; eager RMSNorm keeps each norm's fp32 upcast (4 units, two norms).
  const double eager_silu = layout.eager_swiglu && model.mlp == "swiglu" ? 2.0 : 0.0;
  const double mlp_units = mlp_kind_of(model).activation_units() + eager_silu;
  const double ffn = double(model.ffn) / h;
  const AttentionWidths widths = attention_kind_of(model).widths(model);
  // (as wide as the queries: nothing more where the keys already are, as latent attention's per-head keys)
  const double repeated = layout.repeat_kv ? 4.0 * std::max(0.0, widths.query - widths.key) / h : 0.0;
  const double split = attention_kind_of(model).activation_units(model) + mlp_units * ffn + repeated;
  // Without dropout its two 1-byte masks go; MLA adds its latents, which TP does not split.
  const double replicated = (layout.dropout ? 10.0 : 8.0) + attention_kind_of(model).replicated_units(model) +
                            (layout.eager_rmsnorm && model.norm == Norm::RMSNORM ? 8.0 : 0.0);
  double held = sp ? (replicated + split) / t : replicated + split / t;
  // The linear layers keep their inputs in FP8: QKV's (replicated without sp), the projection's and the MLP's first
  // (2 units each) and its second GEMM's (2 f / h).
  if (model.fp8) {
    const double kept = 1.0 - model.fp8->saved_input_bytes() / 2.0;
    held -= kept * (2.0 / (sp ? t : 1.0) + (4.0 + (model.recomputes("mlp") ? 0.0 : 2.0 * ffn)) / t);
  }
  // torchtitan's op-level policy keeps only the block's input, the saved matmuls' outputs (queries, values, the MLP's
  // first and, for SwiGLU, its last) and attention's output, 2 bytes an element (with a TP rank's share).
  if (model.recomputes("op_sac")) {
    const AttentionWidths& w = widths;
    const bool swiglu = mlp_kind_of(model).activation_units() > 4.0;
    const double whole = (2.0 + (swiglu ? 2.0 : 0.0)) / (sp ? t : 1.0);
    return whole + 2.0 * (w.query + w.value + w.output + model.ffn) / h / t;
  }
  // Selective recomputation's modules drop what they rerun: layernorm the two norms' outputs (2 units each,
  // replicated without sp), mlp the MLP's inner activations (only its input is kept). core_attn is the scores' below.
  if (model.recomputes("layernorm"))
    held -= 4.0 / (sp ? t : 1.0);
  if (model.recomputes("mlp"))
    held -= mlp_units * ffn / t;
  return held;
}

// What an MoE layer's recompute modules stop keeping, in units of `unit` bytes (s b h k / t, scaled to the dtype):
// moe_act the routed experts' activation outputs (2 units an inner element, the second GEMM's input), shared_experts
// the shared experts' inner activations (their input is the layer's own).
double moe_modules_freed(const ModelParams& model, double unit)
{
  const bool act = model.recomputes("moe_act"), shared = model.recomputes("shared_experts");
  if (!act && !shared)
    return 0.0;
  const double h = model.hidden, mlp_units = mlp_kind_of(model).activation_units();
  const double routed_ffn = model.moe.top_k * double(expert_ffn_of(model)) / h;
  const double shared_ffn = model.moe.shared_experts * double(shared_ffn_of(model)) / h;
  return unit * ((act ? 2.0 * routed_ffn : 0.0) + (shared ? mlp_units * shared_ffn : 0.0));
}

// A device's parameter counts (per TP rank) and the groups ZeRO shards them over.
struct ModelCounts {
  double params = 0, experts = 0;          // dense (embedding, head and MTP projections included) and routed experts
  double dense_layers = 0, moe_layers = 0; // the device's layers
  double shards = 1, edp = 1;              // ZeRO's groups: dp x cp (x copies), and the experts' data-parallel group
};

// The first layer with experts (0 without any).
int first_moe_layer(const ModelParams& model, int moe_total)
{
  int first = 0;
  while (moe_total > 0 && !is_moe_layer(model.moe, first))
    ++first;
  return first;
}

// The gradient buffer: whole in its own dtype (fp32 main_grad or the model's), or sharded by ZeRO-2/3 in the reduce
// dtype, which needs each microbatch to reduce-scatter its own (or one microbatch a step).
double gradient_bytes(const MemoryLayout& layout, double e, double params, double shards, double experts, double edp)
{
  const bool sharded = layout.parallel.zero >= 2 && (layout.accumulation_steps <= 1 || layout.reduce_every_microbatch);
  const double g = sharded ? (layout.sharded_grad_bytes > 0 ? layout.sharded_grad_bytes : e)
                           : (layout.main_grad_bytes > 0 ? layout.main_grad_bytes : e);
  return params * g / (sharded ? shards : 1) + experts * g / (sharded ? edp : 1);
}

// What an MoE layer keeps beyond a dense one (sbh = s b h elements): its experts' activations instead of the dense
// MLP's, and the routed tokens. Each routed copy's input to the experts' first GEMM is kept (2 units), or under an FP8
// recipe its FP8 copy alone (the bf16 permuted tokens are freed after the forward). The outputs coming back are not
// kept: the routing probabilities are applied inside the experts' activation, so the combine's backward needs nothing.
double moe_layer_extra(const ModelParams& model, const MemoryLayout& layout, double sbh, double t, double e)
{
  const double h = model.hidden, mlp_units = mlp_kind_of(model).activation_units(), ffn = double(model.ffn) / h;
  const double moe_ffn =
      (model.moe.top_k * double(expert_ffn_of(model)) + model.moe.shared_experts * shared_ffn_of(model)) / h;
  const double k = layout.moe_buffer_scale;
  const double going = model.fp8 ? model.fp8->saved_input_bytes() : 2.0;
  const double extra = sbh * (mlp_units * (k * moe_ffn - ffn) / t + k * going * model.moe.top_k) * e / 2.0;
  return extra - moe_modules_freed(model, sbh * k / t * e / 2.0);
}

// Full recomputation (recompute_num_layers n): under `block` the first n layers of each stage keep only their input
// and the rest everything (`kept`); under `uniform` one input a group of n. Either way the backward reruns a
// checkpoint's forward and holds what it rebuilt until its backward is done: one layer whole (a group of n under
// `uniform`), once, whatever the microbatches in flight (one backward runs at a time).
double full_recompute_activations(const ModelParams& model, const MemoryLayout& layout, double layers_per_stage,
                                  double per_layer, double kept)
{
  const int n = std::max(1, model.recompute_num_layers);
  if (model.recompute_method == RecomputeMethod::BLOCK) {
    const double recomputed = layout.recomputed_layers_on_device >= 0 ? layout.recomputed_layers_on_device
                                                                      : std::min<double>(n, layers_per_stage);
    return (per_layer * recomputed + kept * (layers_per_stage - recomputed)) * layout.in_flight_microbatches +
           (recomputed > 0 ? kept : 0.0);
  }
  const double groups =
      layout.checkpoints_on_device >= 0 ? layout.checkpoints_on_device : std::ceil(layers_per_stage / n);
  return per_layer * groups * layout.in_flight_microbatches + kept * std::min<double>(n, layers_per_stage);
}

// What a device holds per parameter before activations: its weights (16-bit, sharded by ZeRO-3; the gathered copy a
// pipeline keeps; the FP8 copies), its gradient buffer and its optimizer state.
void add_model_state(MemoryFootprint& f, const ModelParams& model, const MemoryLayout& layout, const ModelCounts& c)
{
  const ParallelLayout& l = layout.parallel;
  const double e = dtype_bytes(model.dtype);
  const bool zero3 = l.zero >= 3;
  f.parameters = c.params * e / (zero3 ? c.shards : 1) + c.experts * e / (zero3 ? c.edp : 1);
  // The GEMM weights an FP8 recipe runs, on this TP rank: the dense layers' and the MoE layers' attention (the routed
  // experts are all GEMM weights).
  const double gemm =
      model.fp8
          ? (c.dense_layers * layer_gemm_weights(model) + c.moe_layers * attention_kind_of(model).weights(model)) / l.tp
          : 0.0;
  const bool fp8_params = model.fp8 && layout.fp8_params;
  const double gathered_fp8 = fp8_params ? model.fp8->quantised_bytes() / 2 : e; // one layout gathered
  if (layout.keeps_unsharded) { // the stage's gathered copy, held for the step beside its shard
    f.gathered_parameters = (c.params - gemm) * e + (gemm + c.experts) * gathered_fp8;
    f.parameters += f.gathered_parameters;
  }
  if (model.fp8) { // the FP8 copies of the layers' GEMM weights (both layouts), cached over a step's microbatches
    f.parameters += model.fp8->weight_copy_bytes() * (gemm / (zero3 ? c.shards : 1) + c.experts);
    // Kept as FP8 parameters, they are the weights: no 16-bit copy beside them (a master shard is no such copy).
    if (fp8_params && !(zero3 && layout.sharded_params_are_master))
      f.parameters -= e * (gemm / (zero3 ? c.shards : 1) + c.experts / (zero3 ? c.edp : 1));
  }
  f.gradients = gradient_bytes(layout, e, c.params, c.shards, c.experts, c.edp);
  // Adam's master weight and two moments: 12 bytes a parameter in fp32, fewer under the precision-aware optimizer.
  const std::string recipe = model.fp8 ? model.fp8->name() : "";
  double state = layout.optimizer_precision.state_bytes(model.dtype, recipe);
  if (l.zero >= 3 && layout.sharded_params_are_master) { // the shard is the master: weights, not a copy beside it
    const double master = layout.optimizer_precision.master_bytes(model.dtype, recipe);
    f.parameters += (c.params / c.shards + c.experts / c.edp) * (master - e);
    state -= master;
  }
  f.optimizer = c.params * state / (l.zero >= 1 ? c.shards : 1) + c.experts * state / (l.zero >= 1 ? c.edp : 1);
}

} // namespace

void apply_framework(MemoryLayout& layout, const FrameworkProfile& framework, const std::string& model_dtype)
{
  layout.dropout = framework.dropout > 0;
  layout.loss_bytes_per_logit = framework.cross_entropy_kept_bytes(dtype_bytes(model_dtype));
  layout.eager_rmsnorm = !framework.fused_rmsnorm;
  layout.eager_swiglu = !framework.fused_swiglu;
  layout.repeat_kv = framework.repeat_kv;
  layout.pair_holds_a_layer = framework.overlap_moe_expert_parallel_comm;
  layout.optimizer_precision = framework.optimizer_precision;
  layout.sharded_params_are_master = framework.sharded_params_are_master;
  layout.fp8_params = framework.fp8_param_gather;
}

MemoryFootprint transformer_memory(const ModelParams& model, int micro, const MemoryLayout& layout)
{
  const ParallelLayout& l = layout.parallel;
  const double e = dtype_bytes(model.dtype);
  const double layers_per_stage =
      layout.layers_on_device >= 0 ? layout.layers_on_device : std::ceil(double(model.layers) / l.pp);
  // Parameters on the most loaded stage: its layers plus the embedding (first stage; tied with the head).
  // An untied output layer sits on the last stage, so it adds to the count only when one stage holds everything.
  // MoE layers: the most expert-heavy layer stands for each of them; experts are split over ep and the tp ranks.
  const int moe_total = moe_layer_count(model.moe, model.layers);
  const double moe_layers = layout.moe_layers_on_device >= 0
                                ? layout.moe_layers_on_device
                                : std::ceil(layers_per_stage * moe_total / double(model.layers));
  const int first_moe = first_moe_layer(model, moe_total);
  const double routed = moe_total > 0 ? routed_expert_parameters_at(model, first_moe) : 0.0;
  const double moe_dense = moe_total > 0 ? layer_parameters_at(model, first_moe) - routed : 0.0;
  const double dense_layers = layers_per_stage - moe_layers;
  double params = (dense_layers * layer_parameters(model) + moe_layers * moe_dense + embedding_parameters(model) +
                   (l.pp == 1 ? head_parameters(model) : 0.0)) /
                  l.tp;
  // The last stage's MTP modules: their layers are among its layers; their projections and norms are added here.
  if (model.mtp_depth > 0 && (layout.holds_head || l.pp == 1))
    params += model.mtp_depth * (2.0 * double(model.hidden) * model.hidden + 3.0 * model.hidden) / l.tp;
  const double etp = l.expert_tp(); // experts split over etp GPUs; ep x etp x edp = tp x dp
  const double spare = model.moe.experts > 0 ? double(layout.extra_expert_slots) / model.moe.experts : 0.0;
  const double experts = moe_layers * routed / (double(l.ep) * etp) + moe_layers * routed * spare / etp; // + slots
  // ZeRO shards the dense state over dp x cp (Megatron-Core's dp group), and over the copies' group under DualPipe;
  // under HSDP over one shard group's dp / dp_replicate replicas x cp.
  const double edp = std::max(1.0, double(l.dp) * l.tp / (etp * l.ep)) * layout.model_copies;
  const double shards = double(l.shard_dp()) * l.cp * layout.model_copies;
  MemoryFootprint f;
  add_model_state(f, model, layout, ModelCounts{params, experts, dense_layers, moe_layers, shards, edp});
  const double s = double(model.seq) / l.cp, b = micro, h = model.hidden, t = l.tp; // a rank's 1/cp of the sequence
  const bool sp = l.sp();
  const double held = held_units(model, layout, t, sp);
  // Materialised attention keeps its scores, their softmax and dropout (5 a s / h); flash attention none of them.
  const double scores = attention_kind_of(model).score_units(model, layout.dropout, t);
  double per_layer = 0;
  if (model.recompute == Recompute::FULL) // only each layer's input is kept
    per_layer = 2.0 * s * b * h / (sp ? t : 1);
  else if (model.recompute == Recompute::SELECTIVE) // the modules' activations (default: the attention core's) rerun
    per_layer = s * b * h * (held + (model.recomputes("core_attn") ? 0.0 : scores));
  else
    per_layer = s * b * h * (held + scores);
  // Korthikanti's counts are for 16-bit activations; scale for other dtypes.
  per_layer *= e / 2.0;
  // The `moe` module keeps only the MoE layer's input (counted with the norms): its MLP part holds nothing.
  const double mlp_part = s * b * h * mlp_kind_of(model).activation_units() * model.ffn / h / t * e / 2.0;
  const double per_moe_layer = moe_total == 0 || model.recompute == Recompute::FULL ? per_layer
                               : model.recomputes("moe") ? per_layer - (model.recomputes("mlp") ? 0.0 : mlp_part)
                                                         : per_layer + moe_layer_extra(model, layout, s * b * h, t, e);
  f.activations = (per_layer * dense_layers + per_moe_layer * moe_layers) * layout.in_flight_microbatches;
  if (model.recompute == Recompute::FULL && layers_per_stage > 0) { // what a rerun layer rebuilds: all it keeps
    const double kept = s * b * h * (held + scores) * e / 2.0;
    f.activations = full_recompute_activations(
        model, layout, layers_per_stage, per_layer,
        kept + (moe_layers > 0 ? std::max(0.0, moe_layer_extra(model, layout, s * b * h, t, e)) : 0.0));
  }
  f.in_flight_microbatches = layout.in_flight_microbatches;
  if (layout.pair_holds_a_layer && layers_per_stage > 0) { // the costlier layer, held while the pair runs it
    f.activations += std::max(dense_layers > 0 ? per_layer : 0.0, moe_layers > 0 ? per_moe_layer : 0.0);
    f.in_flight_microbatches += 1.0 / layers_per_stage;
  }
  // The loss keeps one microbatch's fp32 log-probabilities (or, fused by Transformer Engine, the logits) for its
  // backward, vocabulary-parallel over the TP ranks.
  if (layout.holds_head || l.pp == 1) // and one more for each MTP module's loss
    f.activations += s * b * model.vocab / t * layout.loss_bytes_per_logit * (1.0 + model.mtp_depth);
  f.buffers = layout.bucket_bytes + (moe_layers > 0 ? layout.dispatcher_buffer_bytes : 0.0);
  // ZeRO-3 with prefetch holds two layers gathered at once: the one computing and the next.
  if (l.zero >= 3 && shards > 1 && !layout.keeps_unsharded) {
    const double gemm = model.fp8 && layout.fp8_params ? layer_gemm_weights(model) : 0.0; // gathered in FP8
    f.buffers +=
        2.0 * ((layer_parameters(model) - gemm) * e + gemm * (gemm > 0 ? model.fp8->quantised_bytes() / 2 : 0)) / l.tp;
  }
  return f;
}

} // namespace cs
