// The GPT MLP (Radford et al., 2019; Megatron-LM): up projection, GeLU (with its bias fused into it, or added by a
// pass of its own), down projection.
#include "models/transformer/layer_kernels.hpp"
#include "models/transformer/mlp_kind.hpp"

namespace cs {

class GeluMlp : public MlpKind {
public:
  double weights(double hidden, double inner) const override { return 2.0 * hidden * inner; }
  double inner_biases(double inner) const override { return inner; }
  double activation_units() const override { return 4.0; }
  void emit(LayerKernels& b, double tokens, double inner, bool bias) const override
  {
    const double e = b.element_bytes(), h = b.model().hidden;
    b.linear("ffn_up_gemm", tokens, inner, h, bias);
    const double x = tokens * inner;
    if (!b.shape().framework.fused_bias_gelu && bias)
      b.forward("bias_add", b.traffic("bias_add", x * e, x * e, x));
    b.forward("gelu", b.traffic("gelu", x * e, x * e, 8 * x));
    b.backward("gelu_backward", b.traffic("gelu_backward", 2 * x * e, x * e, 12 * x));
    b.linear("ffn_down_gemm", tokens, h, inner, bias);
  }
};

CS_REGISTER_MLP_KIND(GeluMlp, "gelu", "up projection, GeLU, down projection (GPT, BERT, MPT)");

} // namespace cs
