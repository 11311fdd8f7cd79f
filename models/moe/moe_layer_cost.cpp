#include "models/moe/moe_layer_cost.hpp"

#include "models/moe/token_dispatcher.hpp"

#include <cmath>

namespace cs {
namespace {

// A grouped GEMM's rows: every expert's tokens in all (whole tokens, as the memo keys them) and how many experts get
// any.
std::pair<long long, int> grouped_rows(const std::vector<double>& tokens)
{
  double total = 0;
  int experts = 0;
  for (double n : tokens)
    if (n > 0) {
      total += n;
      ++experts;
    }
  return {std::llround(total), experts};
}

} // namespace

PassKernels moe_routing_kernels(const ModelParams& model, double tokens)
{
  const double e = dtype_bytes(model.dtype), h = model.hidden, E = model.moe.experts, k = model.moe.top_k;
  PassKernels out;
  auto both = [&](const std::string& name, Kernel fwd, Kernel bwd) {
    out.forward.push_back({name, std::move(fwd), false});
    out.backward.push_back({name + "_backward", std::move(bwd), false});
  };
  out.forward.push_back({"router_gemm", GemmKernel{tokens, E, h, 1, model.dtype}, false});
  out.backward.push_back({"router_gemm_dgrad", GemmKernel{tokens, h, E, 1, model.dtype}, false});
  out.backward.push_back({"router_gemm_wgrad", GemmKernel{h, E, tokens, 1, model.dtype}, true});
  both("router_softmax_topk", SoftmaxKernel{tokens, E, "fp32"}, SoftmaxKernel{1.5 * tokens, E, "fp32"});
  if (token_dispatcher(model.moe.dispatcher).fuses_permutation())
    return out; // done inside the dispatch and combine kernels
  // Gathers of top_k copies of every token into expert order, and back (scaled by the gate weights).
  const double routed = tokens * k * h * e;
  both("permute", BandwidthKernel{"permute", routed, routed, 0, model.dtype},
       BandwidthKernel{"permute", routed, tokens * h * e, tokens * k * h, model.dtype});
  both("unpermute", BandwidthKernel{"unpermute", routed, tokens * h * e, tokens * k * h, model.dtype},
       BandwidthKernel{"unpermute", tokens * h * e + routed, routed, tokens * k * h, model.dtype});
  return out;
}

PassKernels shared_expert_kernels(const ModelParams& model, double tokens, int tp, const FrameworkProfile& framework)
{
  PassKernels out;
  const double ffn = shared_ffn_of(model) / double(tp);
  for (int s = 0; s < model.moe.shared_experts; ++s) {
    PassKernels one = expert_mlp_kernels(model, tokens, ffn, framework);
    for (auto& k : one.forward)
      out.forward.push_back({"shared_" + k.name, k.kernel, k.weight});
    for (auto& k : one.backward)
      out.backward.push_back({"shared_" + k.name, k.kernel, k.weight});
  }
  return out;
}

PassKernels moe_layer_kernels(const ModelParams& model, const LayerShape& shape, bool shared)
{
  LayerShape dense_part = shape;
  dense_part.mlp = false;
  PassKernels k = layer_kernels(model, dense_part);
  const double tokens = shape.tokens(model);
  for (const PassKernels& extra :
       {moe_routing_kernels(model, tokens),
        shared ? shared_expert_kernels(model, tokens, shape.parallel.tp, shape.framework) : PassKernels{}}) {
    k.forward.insert(k.forward.end(), extra.forward.begin(), extra.forward.end());
    k.backward.insert(k.backward.end(), extra.backward.begin(), extra.backward.end());
  }
  return k;
}

MeanExpertLoad mean_expert_load(const ModelParams& model, const LayerShape& shape)
{
  const ParallelLayout& l = shape.parallel;
  MeanExpertLoad load;
  load.experts = std::max(1, model.moe.experts / std::max(1, l.ep));
  load.tokens = shape.tokens(model) / l.ep_fold() * model.moe.top_k / load.experts;
  return load;
}

PieceTimes ExpertCost::times(const PassKernels& k) const
{
  const PassCost f = pass_cost(cost_, k.forward, framework_.kernel_gap_s);
  const PassCost b = pass_cost(cost_, k.backward, framework_.kernel_gap_s);
  PieceTimes t;
  t.forward = f.seconds;
  // Full recomputation and the `moe` module rerun the whole forward (moe_act only the activation).
  const bool whole = m_.recompute == Recompute::FULL || m_.recomputes("moe");
  t.backward = b.seconds + (whole ? f.seconds : activation_again(k));
  t.weight = b.weight_seconds;
  t.model = f.model;
  return t;
}

double ExpertCost::activation_again(const PassKernels& k) const
{
  if (!m_.recomputes("moe_act")) // the activation's forward reruns in backward (its output was not kept)
    return 0.0;
  std::vector<NamedKernel> again;
  for (const auto& n : k.forward)
    if (n.name == "swiglu" || n.name == "gelu" || n.name == "bias_gelu" || n.name == "squared_relu")
      again.push_back(n);
  return pass_cost(cost_, again, framework_.kernel_gap_s).seconds;
}

ExpertCost::ExpertCost(const ModelParams& model, const KernelCostModel& cost, const FrameworkProfile& framework,
                       int etp)
    : m_(model), cost_(cost), framework_(framework), etp_(etp)
{}

const PieceTimes& ExpertCost::of(double tokens) const
{
  const long long n = std::llround(std::max(0.0, tokens));
  auto it = memo_.find(n);
  if (it != memo_.end())
    return it->second;
  PieceTimes t;
  if (n > 0) {
    t = times(expert_mlp_kernels(m_, double(n), expert_ffn_of(m_) / double(etp_), framework_));
  }
  return memo_.emplace(n, t).first->second;
}

PieceTimes ExpertCost::of_gpu(const std::vector<double>& tokens) const
{
  PieceTimes sum;
  if (!framework_.moe_grouped_gemm) {
    for (double n : tokens) {
      if (n <= 0)
        continue;
      const PieceTimes& t = of(n);
      sum.forward += t.forward;
      sum.backward += t.backward;
      sum.weight += t.weight;
      sum.model = t.model;
    }
    return sum;
  }
  const auto key = grouped_rows(tokens);
  if (key.second == 0)
    return sum;
  if (auto it = grouped_memo_.find(key); it != grouped_memo_.end())
    return it->second;
  return grouped_memo_.emplace(key, times(kernels_of_gpu(tokens))).first->second;
}

PassKernels ExpertCost::kernels_of_gpu(const std::vector<double>& tokens) const
{
  const double ffn = expert_ffn_of(m_) / double(etp_);
  PassKernels out;
  if (!framework_.moe_grouped_gemm) {
    for (double n : tokens) {
      const long long whole = std::llround(std::max(0.0, n)); // as `of` prices it
      if (whole <= 0)
        continue;
      const PassKernels one = expert_mlp_kernels(m_, double(whole), ffn, framework_);
      out.forward.insert(out.forward.end(), one.forward.begin(), one.forward.end());
      out.backward.insert(out.backward.end(), one.backward.begin(), one.backward.end());
    }
    return out;
  }
  // A grouped GEMM's tiles run as one kernel over every expert's rows, so its cost is that of one GEMM over all of
  // them (the launch and the last wave paid once); a weight gradient sums over each expert's own tokens, a batch of
  // one GEMM per expert. On the lent H200 this priced DeepSeek-V3's and Qwen3-235B's experts within -0.3% to +1.5%
  // forward and -4.0% to -5.6% backward of torch._grouped_mm, where one GEMM per expert was 12-20% slow
  // (docs/calibration.md).
  const auto [whole, experts] = grouped_rows(tokens);
  if (experts == 0)
    return out;
  const double rows = double(whole);
  out = expert_mlp_kernels(m_, rows, ffn, framework_);
  for (auto& named : out.backward)
    if (auto* g = std::get_if<GemmKernel>(&named.kernel); g && named.weight) {
      g->k = rows / experts;
      g->batch = experts;
    }
  return out;
}

} // namespace cs
