// Sliding-window attention (Mistral 7B; GPT-OSS alternating it with full attention): grouped-query attention whose
// queries attend only the `window` keys before them in the windowed layers. One layer stands for all here, so a model
// whose layers alternate (full_every: 2) prices each layer's attention core as the average of a full and a windowed
// one (exact over any even number of layers); GPT-OSS's learned attention sinks add one logit a head (parameters only).
// [recon] The core of a windowed layer is priced as a non-causal attention of every query over `window` keys: the
// ramp over the first `window` positions (a few percent at 4K tokens) is not discounted.
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/layer_kernels.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace cs {

namespace {

class SlidingWindowAttention : public AttentionKind {
public:
  std::string name() const override { return "sliding_window"; }

  void configure(ObjectReader& r) override
  {
    r.required("window", window_, "keys each query attends, itself included (GPT-OSS: 128; Mistral 7B: 4,096)")
        .field("full_every", full_every_,
               "every k-th layer attends the whole sequence instead (GPT-OSS alternates: 2; 0 = every layer "
               "windowed)")
        .field("sinks", sinks_, "a learned sink logit a head (GPT-OSS)");
    r.require_positive("window", window_);
    r.require_at_most("window", window_, 1 << 24);
    r.require_non_negative("full_every", full_every_);
    r.require_at_most("full_every", full_every_, 1 << 16);
  }

  void check(const ObjectReader& block, const ModelParams& model) const override
  {
    if (window_ > model.seq)
      block.fail_at("window", fmt::format("window ({}) exceeds the sequence ({})", window_, model.seq));
    if (model.attention == AttentionCore::MATERIALIZED)
      block.fail_at("window", "a sliding window is priced on fused attention (model.attention: flash, triton or "
                              "cudnn), not materialized");
  }

  AttentionWidths widths(const ModelParams& model) const override { return gqa().widths(model); }
  double weights(const ModelParams& model) const override { return gqa().weights(model); }
  double biases(const ModelParams& model) const override { return gqa().biases(model); }
  double norm_parameters(const ModelParams& model) const override
  {
    return gqa().norm_parameters(model) + (sinks_ ? double(model.heads) : 0.0);
  }
  double activation_units(const ModelParams& model) const override { return gqa().activation_units(model); }
  double score_units(const ModelParams& model, bool dropout, double tp) const override
  {
    return gqa().score_units(model, dropout, tp);
  }
  std::string tp_problem(const ModelParams& model, int tp) const override { return gqa().tp_problem(model, tp); }

  double core_forward_flops_per_token(const ModelParams& model) const override
  {
    const double full = gqa().core_forward_flops_per_token(model);
    return full_share() * full + (1 - full_share()) * full * double(window_) / model.seq;
  }

  void emit(LayerKernels& out) const override
  {
    // Grouped-query attention's kernels, with its core split into the full layers' share and the windowed ones'.
    LayerKernels whole(out.model(), out.shape());
    gqa().emit(whole);
    const PassKernels k = whole.take();
    auto split = [&](const NamedKernel& n, bool forward) {
      const auto* a = std::get_if<AttentionKernel>(&n.kernel);
      if (!a) {
        forward ? out.forward(n.name, n.kernel) : out.backward(n.name, n.kernel, n.weight);
        return;
      }
      if (full_share() > 0) {
        AttentionKernel full = *a;
        full.batch *= full_share();
        forward ? out.forward(n.name, full) : out.backward(n.name, full, n.weight);
      }
      AttentionKernel windowed = *a;
      windowed.batch *= 1 - full_share();
      windowed.seq_kv = std::min(windowed.seq_kv, double(window_));
      windowed.causal = false; // every query sees a full window (the first window's ramp aside)
      forward ? out.forward(n.name + "_window", windowed) : out.backward(n.name + "_window", windowed, n.weight);
    };
    for (const auto& n : k.forward)
      split(n, true);
    for (const auto& n : k.backward)
      split(n, false);
  }

private:
  static const AttentionKind& gqa()
  {
    static const std::shared_ptr<AttentionKind> kind = make_attention_kind("gqa");
    return *kind;
  }
  double full_share() const { return full_every_ > 0 ? 1.0 / full_every_ : 0.0; }

  int window_ = 0;
  int full_every_ = 0;
  bool sinks_ = false;
};

} // namespace

CS_REGISTER_ATTENTION_KIND(SlidingWindowAttention, "sliding_window",
                           "grouped-query attention over a window of the keys before each query (window, full_every "
                           "for layers that alternate with full attention, sinks)");

} // namespace cs
