#include "models/transformer/mlp_kind.hpp"

#include "models/transformer/layer_kernels.hpp"
#include "models/transformer/model_params.hpp"

namespace cs {

const MlpKind& mlp_kind(const std::string& name)
{
  // Asked for every layer count and memory estimate a planner search makes (hundreds of thousands of times), nearly
  // always for the same name: the last answer is kept, per thread.
  thread_local std::string last;
  thread_local const MlpKind* kind = nullptr;
  if (!kind || name != last) {
    kind = &registered_instance<MlpKind>(name);
    last = name;
  }
  return *kind;
}

const MlpKind& mlp_kind_of(const ModelParams& model) { return mlp_kind(model.mlp); }

void UngatedMlp::emit(LayerKernels& b, double tokens, double inner, bool bias) const
{
  const double h = b.model().hidden;
  b.linear("ffn_up_gemm", tokens, inner, h, bias);
  activation(b, tokens * inner, bias);
  b.linear("ffn_down_gemm", tokens, h, inner, bias);
}

} // namespace cs
