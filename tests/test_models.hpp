// Small transformer shapes for tests, written out field by field.
#pragma once

#include "models/transformer/framework.hpp"
#include "models/transformer/model_params.hpp"

#include <stdexcept>
#include <string>

namespace cs::testing {

/** The built-in framework profile `name` (megatron, megatron-core, fsdp, torch-eager). */
inline FrameworkProfile framework(const std::string& name)
{
  for (const auto& p : builtin_frameworks())
    if (p.name == name)
      return p;
  throw std::invalid_argument("no framework profile " + name);
}

inline ModelParams model(int layers, int hidden, int ffn, int heads, int seq, int vocab, const char* dtype = "bf16",
                         const char* recompute = "none")
{
  ModelParams m;
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = ffn;
  m.heads = heads;
  m.seq = seq;
  m.vocab = vocab;
  m.dtype = dtype;
  m.recompute = recompute_from_name(recompute);
  return m;
}

/** `model(...)`'s shape as Llama writes its block: grouped-query attention with 8 key/value heads, SwiGLU, RMSNorm, no
 *  biases. */
inline ModelParams llama_block(int layers, int hidden, int ffn, int heads, int seq, int vocab,
                               const char* recompute = "none")
{
  ModelParams m = model(layers, hidden, ffn, heads, seq, vocab, "bf16", recompute);
  m.kv_heads = 8;
  m.mlp = "swiglu";
  m.norm = Norm::RMSNORM;
  m.bias = false;
  return m;
}

} // namespace cs::testing
