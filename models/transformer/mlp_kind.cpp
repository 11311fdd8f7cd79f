#include "models/transformer/mlp_kind.hpp"

#include "models/transformer/model_params.hpp"

#include <map>

namespace cs {

const MlpKind& mlp_kind(const std::string& name)
{
  // Every registered kind, made once (registration is over before the first call).
  static const std::map<std::string, std::unique_ptr<MlpKind>> kinds = [] {
    std::map<std::string, std::unique_ptr<MlpKind>> out;
    const auto& registry = Registry<MlpKind>::instance();
    for (const auto& n : registry.names())
      out.emplace(n, registry.create(n));
    return out;
  }();
  auto it = kinds.find(name);
  if (it == kinds.end())
    Registry<MlpKind>::instance().create(name); // throws, listing the names
  return *it->second;
}

const MlpKind& mlp_kind_of(const ModelParams& model) { return mlp_kind(model.mlp); }

} // namespace cs
