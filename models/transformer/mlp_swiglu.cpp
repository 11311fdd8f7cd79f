// SwiGLU (Shazeer, 2020; Llama, Mixtral, Qwen, DeepSeek): the gate and up projections as one GEMM (as Megatron fuses
// them), the SiLU-gated product, the down projection.
#include "models/transformer/layer_kernels.hpp"
#include "models/transformer/mlp_kind.hpp"

namespace cs {

class SwigluMlp : public MlpKind {
public:
  double weights(double hidden, double inner) const override { return 3.0 * hidden * inner; }
  double inner_biases(double inner) const override { return 2 * inner; }
  double activation_units() const override { return 6.0; }
  void emit(LayerKernels& b, double tokens, double inner, bool bias) const override
  {
    const double e = b.element_bytes(), h = b.model().hidden;
    b.linear("ffn_gate_up_gemm", tokens, 2 * inner, h, bias);
    const double n = tokens * inner;
    if (b.shape().framework.fused_swiglu) {
      b.forward("swiglu", b.traffic("swiglu", 2 * n * e, n * e, 6 * n));
      b.backward("swiglu_backward", b.traffic("swiglu_backward", 3 * n * e, 2 * n * e, 8 * n));
    } else { // eager: silu(gate) (1 read, 1 written), then its product with up (2, 1); backward the product's two
             // gradients (2, 1 each) and SiLU's (2, 1) [recon: autograd's graph of F.silu(a) * b]
      b.forward("swiglu", b.traffic("swiglu_eager", 3 * n * e, 2 * n * e, 6 * n));
      b.backward("swiglu_backward", b.traffic("swiglu_eager", 6 * n * e, 3 * n * e, 8 * n));
    }
    b.linear("ffn_down_gemm", tokens, h, inner, bias);
  }
};

CS_REGISTER_MLP_KIND(SwigluMlp, "swiglu", "gate and up projections, SiLU-gated product, down projection (Llama)");

} // namespace cs
