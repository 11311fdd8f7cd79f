// Squared ReLU (So et al., Primer, 2021; Nemotron-4, Megatron --squared-relu): up projection, relu(x)^2, down
// projection, no gate.
#include "models/transformer/layer_kernels.hpp"
#include "models/transformer/mlp_kind.hpp"

namespace cs {

class SquaredReluMlp : public MlpKind {
public:
  double weights(double hidden, double inner) const override { return 2.0 * hidden * inner; }
  double inner_biases(double inner) const override { return inner; }
  // Kept for backward: the ReLU's output (both its own backward and the square's read it) and the square, the down
  // projection's input: GeLU's count.
  double activation_units() const override { return 4.0; }
  void emit(LayerKernels& b, double tokens, double inner, bool bias) const override
  {
    const double e = b.element_bytes(), h = b.model().hidden;
    b.linear("ffn_up_gemm", tokens, inner, h, bias);
    const double x = tokens * inner;
    if (bias)
      b.forward("bias_add", b.traffic("bias_add", x * e, x * e, x));
    // Megatron-Core applies it in PyTorch (torch.pow(F.relu(x), 2); bias_activation_fusion covers GeLU and SwiGLU
    // only): a ReLU pass and a square pass forward; backward the square's gradient (2 relu(x) g: two reads, one
    // write) and the ReLU's (the gradient and its output read, one write) [recon: autograd's graph of the two ops].
    b.forward("squared_relu", b.traffic("squared_relu", 2 * x * e, 2 * x * e, 2 * x));
    b.backward("squared_relu_backward", b.traffic("squared_relu_backward", 4 * x * e, 2 * x * e, 3 * x));
    b.linear("ffn_down_gemm", tokens, h, inner, bias);
  }
};

CS_REGISTER_MLP_KIND(SquaredReluMlp, "squared-relu",
                     "up projection, squared ReLU, down projection (Nemotron-4; Megatron --squared-relu)");

} // namespace cs
