// Multi-head latent attention's shape (DeepSeek-V2 and V3), so that presets can build the `mla` attention kind.
#pragma once

#include "models/transformer/attention_kind.hpp"

namespace cs {

/** DeepSeek's names (its config.json); Megatron-Core's MLATransformerConfig calls the two head sizes qk_head_dim and
 *  qk_pos_emb_head_dim. */
struct MlaParams {
  int q_lora_rank = 1536;     // the queries' compressed width (0: queries projected straight from the hidden state)
  int kv_lora_rank = 512;     // the keys' and values' shared compressed width
  int qk_nope_head_dim = 128; // per head, the query/key part without rotary embedding
  int qk_rope_head_dim = 64;  // per head, the rotary part (the key's is one, shared by every head)
  int v_head_dim = 128;       // per head, the values' width
};

/** The `mla` attention kind with `params`. */
std::shared_ptr<AttentionKind> make_mla_attention(const MlaParams& params);

} // namespace cs
