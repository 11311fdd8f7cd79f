// The GPT MLP (Radford et al., 2019; Megatron-LM): up projection, GeLU (with its bias fused into it, or added by a
// pass of its own), down projection.
#include "models/transformer/layer_kernels.hpp"
#include "models/transformer/mlp_kind.hpp"

namespace cs {

class GeluMlp : public UngatedMlp {
protected:
  void activation(LayerKernels& b, double x, bool bias) const override
  {
    const double e = b.element_bytes();
    if (!b.shape().framework.fused_bias_gelu && bias)
      b.forward("bias_add", b.traffic("bias_add", x * e, x * e, x));
    b.forward("gelu", b.traffic("gelu", x * e, x * e, 8 * x));
    b.backward("gelu_backward", b.traffic("gelu_backward", 2 * x * e, x * e, 12 * x));
  }
};

CS_REGISTER_MLP_KIND(GeluMlp, "gelu", "up projection, GeLU, down projection (GPT, BERT, MPT)");

} // namespace cs
