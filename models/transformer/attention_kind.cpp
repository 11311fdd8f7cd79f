#include "models/transformer/attention_kind.hpp"

#include <fmt/format.h>

namespace cs {

namespace {
constexpr const char* kDefaultKind = "gqa"; // multi-head attention is grouped-query attention with kv_heads = heads
} // namespace

double AttentionKind::activation_units(const ModelParams& model) const
{
  const AttentionWidths w = widths(model);
  const double h = model.hidden;
  return 2.0 * (w.query + w.output) / h + 2.0 * (w.key + w.value) / h;
}

double AttentionKind::core_forward_flops_per_token(const ModelParams& model) const
{
  const AttentionWidths w = widths(model);
  return 2.0 * model.seq * (w.query + w.output);
}

std::shared_ptr<AttentionKind> make_attention_kind(const std::string& name)
{
  return Registry<AttentionKind>::instance().create(name);
}

const AttentionKind& attention_kind_of(const ModelParams& model)
{
  if (model.attention_kind)
    return *model.attention_kind;
  static const std::shared_ptr<AttentionKind> fallback = make_attention_kind(kDefaultKind);
  return *fallback;
}

void read_attention_kind(ObjectReader& r, ModelParams& model)
{
  const auto& registry = Registry<AttentionKind>::instance();
  std::string given;
  for (const auto& name : registry.names()) {
    if (name == kDefaultKind)
      continue;
    const std::string help = registry.description(name);
    if (r.describing()) { // document the kind's keys
      ObjectReader block = r.child(name.c_str(), help.c_str());
      make_attention_kind(name)->configure(block);
      continue;
    }
    if (!r.has(name.c_str())) {
      r.child(name.c_str(), help.c_str()); // declared, so that it is a known key
      continue;
    }
    if (!given.empty())
      r.fail_at(name.c_str(), fmt::format("a layer has one attention kind: '{}' and '{}' are both given", given, name));
    ObjectReader block = r.child(name.c_str(), help.c_str());
    auto kind = make_attention_kind(name);
    kind->configure(block);
    block.finish();
    kind->check(block, model);
    model.attention_kind = std::move(kind);
    given = name;
  }
}

} // namespace cs
