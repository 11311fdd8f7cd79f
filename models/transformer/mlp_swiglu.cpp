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
    b.forward("swiglu", b.traffic("swiglu", 2 * tokens * inner * e, tokens * inner * e, 6 * tokens * inner));
    b.backward("swiglu_backward",
               b.traffic("swiglu_backward", 3 * tokens * inner * e, 2 * tokens * inner * e, 8 * tokens * inner));
    b.linear("ffn_down_gemm", tokens, h, inner, bias);
  }
};

CS_REGISTER_MLP_KIND(SwigluMlp, "swiglu", "gate and up projections, SiLU-gated product, down projection (Llama)");

} // namespace cs
