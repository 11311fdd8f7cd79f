// Squared ReLU (So et al., Primer, 2021; Nemotron-4, Megatron --squared-relu): up projection, relu(x)^2, down
// projection, no gate. It keeps what GeLU keeps: the ReLU's output (its own backward and the square's read it) and the
// square, the down projection's input.
#include "models/transformer/layer_kernels.hpp"
#include "models/transformer/mlp_kind.hpp"

namespace cs {

class SquaredReluMlp : public UngatedMlp {
protected:
  // Megatron-Core applies it in PyTorch (torch.pow(F.relu(x), 2); bias_activation_fusion covers GeLU and SwiGLU
  // only): a ReLU pass and a square pass forward; backward the square's gradient (2 relu(x) g: two reads, one write)
  // and the ReLU's (the gradient and its output read, one write) [recon: autograd's graph of the two ops].
  void activation(LayerKernels& b, double x, bool bias) const override
  {
    const double e = b.element_bytes();
    if (bias)
      b.forward("bias_add", b.traffic("bias_add", x * e, x * e, x));
    b.forward("squared_relu", b.traffic("squared_relu", 2 * x * e, 2 * x * e, 2 * x));
    b.backward("squared_relu_backward", b.traffic("squared_relu_backward", 4 * x * e, 2 * x * e, 3 * x));
  }
};

CS_REGISTER_MLP_KIND(SquaredReluMlp, "squared-relu",
                     "up projection, squared ReLU, down projection (Nemotron-4; Megatron --squared-relu)");

} // namespace cs
