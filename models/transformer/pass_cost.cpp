#include "models/transformer/pass_cost.hpp"

#include <algorithm>
#include <map>

namespace cs {

PassCost pass_cost(const KernelCostModel& cost, const std::vector<NamedKernel>& kernels, double kernel_gap)
{
  PassCost out;
  std::map<std::string, double> by_model;
  for (const auto& k : kernels) {
    const CostBreakdown b = cost.predict(k.kernel);
    const double t = std::max(b.total, kernel_gap);
    out.seconds += t;
    if (k.weight)
      out.weight_seconds += t;
    by_model[b.model] += t;
  }
  double most = -1;
  for (const auto& [model, seconds] : by_model)
    if (seconds > most) {
      most = seconds;
      out.model = model;
    }
  return out;
}

namespace {

double gemm_seconds(const KernelCostModel& cost, const std::vector<NamedKernel>& kernels)
{
  double s = 0;
  for (const auto& k : kernels)
    if (std::holds_alternative<GemmKernel>(k.kernel))
      s += cost.predict(k.kernel).total;
  return s;
}

// A pass's two TP collectives, of tp_s each. Blocking, they add whole. Overlapped (Transformer Engine's userbuffers,
// Megatron's --tp-comm-overlap), each is split into as many chunks as there are TP ranks and pipelined with the GEMM
// beside it (the all-gather with the GEMM after it, the reduce-scatter with the one before), so what shows is one
// chunk, or what the pass's GEMMs cannot cover [recon: chunking as the ring-exchange overlap does it; the SMs the
// overlaps take are userbuffers_sm_seconds'].
double exposed_tp(double tp_s, double gemm_s, const FrameworkProfile& fw, int tp)
{
  if (!fw.tp_comm_overlap || tp <= 1)
    return 2 * tp_s;
  return 2 * std::max(tp_s / tp, tp_s - gemm_s / 2);
}

// The Transformer Engine userbuffers layer (framework.tp_overlap) whose overlap meets a GEMM of the layer: its
// forward under <layer>_fprop, its gradients under _dgrad and _wgrad. Experts and shared experts have none.
std::string ub_layer_of(const std::string& name, bool backward)
{
  const TpProjection* p = tp_projection(name, backward);
  if (!p)
    return {};
  if (!backward)
    return std::string(p->te_layer) + "_fprop";
  const std::string rest = name.substr(std::string(p->gemm).size());
  return rest == "_dgrad" || rest == "_wgrad" ? p->te_layer + rest : std::string();
}

// What the userbuffers overlaps' SMs cost a pass's GEMMs under tp_comm_overlap: a GEMM launched without its overlap's
// SMs (set_sm_margin) runs its waves on the rest for all of its time; otherwise a pipeline or bulk collective's
// kernels hold them while it runs, `collective_s`, at most the GEMM's time; a ring exchange on the copy engines holds
// none. [recon: a kernel beside the GEMM costs it its SMs' share of the GEMM while it runs]
double userbuffers_sm_seconds(const KernelCostModel& cost, const std::vector<NamedKernel>& kernels,
                              const FrameworkProfile& fw, int tp, double collective_s, bool backward)
{
  if (!fw.tp_comm_overlap || tp <= 1 || fw.tp_overlap.empty() || !(collective_s > 0))
    return 0;
  double extra = 0;
  for (const auto& k : kernels) {
    const auto* g = std::get_if<GemmKernel>(&k.kernel);
    const auto it = g ? fw.tp_overlap.find(ub_layer_of(k.name, backward)) : fw.tp_overlap.end();
    if (it == fw.tp_overlap.end() || it->second.num_sm <= 0)
      continue;
    const UbOverlap& o = it->second;
    if (!o.set_sm_margin && o.method == "ring_exchange")
      continue;
    GemmKernel without = *g;
    without.sm_margin += o.num_sm;
    const double t = cost.predict(*g).total, slower = cost.predict(without).total - t;
    extra += o.set_sm_margin ? slower : slower * std::min(1.0, collective_s / t);
  }
  return extra;
}

// The backward's asynchronous TP collectives (Megatron's LinearWithGradAccumulationAndAsyncCommunication): each
// column-parallel layer issues them before its own data- and weight-gradient GEMMs and waits after, so what shows is
// what those GEMMs cannot cover, and while they run the GEMMs lose the SMs the collectives take (comm_sm_fraction).
// [recon: the layer's GEMMs are the ones named after the column-parallel projections; without them, every GEMM]
double exposed_async(double async_s, const KernelCostModel& cost, const std::vector<NamedKernel>& backward,
                     const FrameworkProfile& fw)
{
  if (async_s <= 0)
    return 0;
  double cover = 0;
  for (const auto& k : backward)
    if (const TpProjection* p = tp_projection(k.name, true);
        p && p->column && std::holds_alternative<GemmKernel>(k.kernel))
      cover += cost.predict(k.kernel).total;
  if (cover <= 0)
    cover = gemm_seconds(cost, backward);
  return std::max(0.0, async_s - cover) + fw.comm_sm_fraction * std::min(async_s, cover);
}

// The forward kernels a recompute module reruns, by the names the layer gives them (an FP8 linear's quantisation
// carries its GEMM's name as a prefix): core_attn, materialised attention's scores, softmax, dropout and values
// (fused attention keeps none to rerun); layernorm, the norms; mlp, the MLP's GEMMs and activation; mla_up_proj,
// MLA's up projections, rotary embedding and the concatenations that build its queries and keys; shared_experts, an
// MoE layer's shared experts whole (moe_act, the routed experts' activation, is the expert cost's).
bool reruns(const std::string& module, const std::string& kernel)
{
  if (module == "core_attn") // the output projection (attn_out_gemm) is not part of the core
    return kernel.rfind("attn_", 0) == 0 && kernel.rfind("attn_out_gemm", 0) != 0;
  if (module == "layernorm")
    return kernel == "layernorm" || kernel == "qk_norm";
  if (module == "mlp")
    return kernel.rfind("ffn_", 0) == 0 || kernel == "gelu" || kernel == "swiglu" || kernel == "bias_gelu" ||
           kernel == "squared_relu";
  if (module == "shared_experts") // an MoE layer's shared experts (their kernels carry the prefix)
    return kernel.rfind("shared_", 0) == 0;
  if (module == "moe") // the whole MoE layer: router, permutation, shared experts (the routed experts are ExpertCost's)
    return kernel.rfind("router_", 0) == 0 || kernel == "permute" || kernel == "unpermute" ||
           kernel.rfind("shared_", 0) == 0;
  if (module == "mla_up_proj")
    return kernel.rfind("mla_q_up_gemm", 0) == 0 || kernel.rfind("mla_kv_up_gemm", 0) == 0 || kernel == "mla_rope" ||
           kernel == "mla_qk_concat";
  return false;
}

// torchtitan's op-level selective activation checkpointing (activation_checkpoint.mode "selective",
// selective_ac_option "op"): in each block it saves the outputs of the matmuls but every second one, of attention and
// of reduce-scatters, and reruns every other op in backward. A Llama block's matmuls run q, k, v, o, then w1, w3, w2
// (SwiGLU) or fc1, fc2 (GeLU): k, o and w3 (or fc2) rerun. Here the share of each forward kernel that reruns: that of
// the fused QKV GEMM the keys are (its kernels named after it: an FP8 linear's casts too), the output projection,
// half the fused gate-up GEMM or GeLU's second, no attention core, and every kernel that is no matmul. [recon: from
// torchtitan's _save_list policy and its Llama modules' order; the fused kernels are cut by their FLOPs]
std::vector<NamedKernel> op_sac_reruns(const std::vector<NamedKernel>& forward)
{
  double kv_share = 0;
  bool swiglu = false;
  for (const auto& n : forward) {
    if (const auto* a = std::get_if<AttentionKernel>(&n.kernel))
      kv_share = a->kv_heads / (a->heads + 2 * a->kv_heads);
    swiglu = swiglu || n.name.rfind("ffn_gate_up_gemm", 0) == 0;
  }
  auto gemm_share = [&](const std::string& name) {
    if (name.rfind("qkv_gemm", 0) == 0)
      return kv_share;
    if (name.rfind("attn_out_gemm", 0) == 0)
      return 1.0;
    if (name.rfind("ffn_gate_up_gemm", 0) == 0)
      return 0.5;
    if (name.rfind("ffn_down_gemm", 0) == 0)
      return swiglu ? 0.0 : 1.0;
    return name.rfind("ffn_up_gemm", 0) == 0 ? 0.0 : -1.0; // -1: not a matmul
  };
  std::vector<NamedKernel> out;
  for (const auto& n : forward) {
    if (std::holds_alternative<AttentionKernel>(n.kernel))
      continue; // attention's output is saved
    const double share = gemm_share(n.name);
    if (share == 0)
      continue;
    NamedKernel again = n;
    if (share > 0 && share < 1) { // a part of a fused GEMM: its output columns (and a cast's elements) by the share
      if (auto* g = std::get_if<GemmKernel>(&again.kernel))
        g->n *= share;
      else if (auto* b = std::get_if<BandwidthKernel>(&again.kernel)) {
        b->bytes_in *= share;
        b->bytes_out *= share;
        b->flops *= share;
      }
    }
    out.push_back(again);
  }
  return out;
}

} // namespace

PieceTimes piece_times(const PassKernels& k, const KernelCostModel& cost, const FrameworkProfile& fw,
                       const TpCollectives& tp_s, Recompute recompute, int tp, const std::vector<std::string>& modules)
{
  const PassCost f = pass_cost(cost, k.forward, fw.kernel_gap_s), b = pass_cost(cost, k.backward, fw.kernel_gap_s);
  PieceTimes t;
  t.model = f.model;
  t.forward = f.seconds + (tp_s.each > 0 ? exposed_tp(tp_s.each, gemm_seconds(cost, k.forward), fw, tp) +
                                               userbuffers_sm_seconds(cost, k.forward, fw, tp, tp_s.each, false)
                                         : 0.0);
  if (tp_s.backward_each < 0)
    t.backward = b.seconds + (tp_s.each > 0 ? exposed_tp(tp_s.each, gemm_seconds(cost, k.backward), fw, tp) +
                                                  userbuffers_sm_seconds(cost, k.backward, fw, tp, tp_s.each, true)
                                            : 0.0);
  else
    t.backward = b.seconds + 2 * tp_s.backward_each + exposed_async(tp_s.backward_async, cost, k.backward, fw);
  // Current FP8 scaling under sequence parallelism agrees on each gathered tensor's scale first: the column-parallel
  // layers' inputs forward, the row-parallel layers' output gradients backward (Transformer Engine's
  // with_amax_reduction over the TP group): two a pass in a dense layer, the QKV and first MLP projections' and the
  // output projections'.
  t.forward += 2 * tp_s.amax_each;
  t.backward += 2 * tp_s.amax_each;
  t.weight = b.weight_seconds;
  if (recompute == Recompute::FULL) // the forward pass runs again inside backward
    t.backward += t.forward;
  if (recompute == Recompute::SELECTIVE &&
      std::find(modules.begin(), modules.end(), "op_sac") != modules.end()) { // torchtitan's op-level policy
    t.backward += pass_cost(cost, op_sac_reruns(k.forward), fw.kernel_gap_s).seconds;
  } else if (recompute == Recompute::SELECTIVE) { // the modules' forward kernels run again (default: core_attn)
    const std::vector<std::string> given = modules.empty() ? std::vector<std::string>{"core_attn"} : modules;
    std::vector<NamedKernel> again;
    for (const auto& n : k.forward)
      if (std::any_of(given.begin(), given.end(), [&n](const std::string& m) { return reruns(m, n.name); }))
        again.push_back(n);
    t.backward +=
        pass_cost(cost, again, fw.kernel_gap_s).seconds + userbuffers_sm_seconds(cost, again, fw, tp, tp_s.each, false);
  }
  return t;
}

} // namespace cs
