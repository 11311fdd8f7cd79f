#include "models/transformer/mlp_kind.hpp"

#include "models/transformer/model_params.hpp"

namespace cs {

const MlpKind& mlp_kind(const std::string& name) { return registered_instance<MlpKind>(name); }

const MlpKind& mlp_kind_of(const ModelParams& model) { return mlp_kind(model.mlp); }

} // namespace cs
