#include "models/transformer/moe_params.hpp"

#include "models/moe/token_dispatcher.hpp"
#include "models/transformer/mlp_kind.hpp"
#include "models/transformer/model_params.hpp"

#include <fmt/format.h>

namespace cs {

void read_moe(ObjectReader& r, MoeParams& moe)
{
  r.field("experts", moe.experts, "routed experts per MoE layer (0 = dense model)")
      .field("top_k", moe.top_k, "experts each token is routed to (Megatron moe_router_topk)")
      .field("expert_ffn", moe.expert_ffn, "inner size of one expert's MLP (0 = model.ffn; moe_ffn_hidden_size)")
      .field("shared_experts", moe.shared_experts, "experts every token also runs (DeepSeek-MoE, Qwen2-MoE)")
      .field("shared_ffn", moe.shared_ffn, "inner size of one shared expert (0 = expert_ffn)")
      .field("every", moe.every, "an MoE layer every k-th layer (moe_layer_freq; Switch: 2)")
      .field("first_dense", moe.first_dense, "the first layers keep a dense MLP (DeepSeek-MoE: 1)")
      .field("capacity_factor", moe.capacity_factor,
             "tokens an expert takes per step as a multiple of the even share; more are dropped (absent = dropless)")
      .field("dispatcher", moe.dispatcher,
             "how tokens reach their experts: alltoall | allgather | deepep | hybridep (Megatron "
             "moe_token_dispatcher_type; deepep and hybridep = flex with that moe_flex_dispatcher_backend)")
      .field("max_nodes_per_token", moe.max_nodes_per_token,
             "node-limited routing: a token's experts on at most this many nodes (DeepSeek-V3: 4; 0 = any)")
      .field("deepep_sms", moe.deepep_sms,
             "SMs the deepep dispatcher's kernels take from compute while they overlap it (moe_deepep_num_sms)")
      .field("hybridep_sms", moe.hybridep_sms,
             "SMs the hybridep dispatcher's kernels take from compute while they overlap it (moe_hybridep_num_sms)");
  r.finish();
  r.require(Registry<TokenDispatcher>::instance().has(moe.dispatcher), "dispatcher",
            "unknown dispatcher '" + moe.dispatcher +
                "' (expected one of: " + Registry<TokenDispatcher>::instance().joined_names() + ")");
  r.require_non_negative("max_nodes_per_token", moe.max_nodes_per_token);
  r.require_positive("deepep_sms", moe.deepep_sms);
  r.require_at_most("deepep_sms", moe.deepep_sms, 1024);
  r.require_positive("hybridep_sms", moe.hybridep_sms);
  r.require_at_most("hybridep_sms", moe.hybridep_sms, 1024);
  r.require_at_most("max_nodes_per_token", moe.max_nodes_per_token, 1 << 16);
  r.require_non_negative("experts", moe.experts);
  r.require_at_most("experts", moe.experts, 1 << 16);
  r.require_non_negative("expert_ffn", moe.expert_ffn);
  r.require_at_most("expert_ffn", moe.expert_ffn, 1 << 22);
  r.require_non_negative("shared_experts", moe.shared_experts);
  r.require_at_most("shared_experts", moe.shared_experts, 64);
  r.require_non_negative("shared_ffn", moe.shared_ffn);
  r.require_at_most("shared_ffn", moe.shared_ffn, 1 << 22);
  r.require_positive("every", moe.every);
  r.require_at_most("every", moe.every, 100000);
  r.require_non_negative("first_dense", moe.first_dense);
  r.require(!r.has("capacity_factor") || moe.capacity_factor > 0, "capacity_factor",
            "capacity_factor must be greater than 0 (leave it out for dropless routing)");
  r.require_at_most("capacity_factor", moe.capacity_factor, 1e6);
}

void check_moe(const ObjectReader& r, const MoeParams& moe, int layers)
{
  if (r.describing() || !moe.enabled())
    return;
  r.require(moe.top_k >= 1, "top_k", "top_k must be at least 1");
  r.require(moe.top_k <= moe.experts, "top_k",
            fmt::format("top_k ({}) is greater than the experts ({})", moe.top_k, moe.experts));
  r.require(moe.first_dense < layers, "first_dense",
            fmt::format("first_dense ({}) leaves no MoE layer among {} layers", moe.first_dense, layers));
}

bool is_moe_layer(const MoeParams& moe, int l)
{
  return moe.enabled() && l >= moe.first_dense && (l - moe.first_dense) % moe.every == 0;
}

int moe_layer_count(const MoeParams& moe, int layers)
{
  int n = 0;
  for (int l = 0; l < layers; ++l)
    n += is_moe_layer(moe, l) ? 1 : 0;
  return n;
}

int expert_ffn_of(const ModelParams& model) { return model.moe.expert_ffn > 0 ? model.moe.expert_ffn : model.ffn; }
int shared_ffn_of(const ModelParams& model)
{
  return model.moe.shared_ffn > 0 ? model.moe.shared_ffn : expert_ffn_of(model);
}

double expert_parameters(const ModelParams& model)
{
  return mlp_kind_of(model).weights(model.hidden, expert_ffn_of(model));
}

double shared_expert_parameters(const ModelParams& model)
{
  return model.moe.shared_experts * mlp_kind_of(model).weights(model.hidden, shared_ffn_of(model));
}

double router_parameters(const ModelParams& model) { return double(model.hidden) * model.moe.experts; }

} // namespace cs
