// Small transformer shapes for tests, written out field by field.
#pragma once

#include "models/transformer/model_params.hpp"

namespace cs::testing {

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

} // namespace cs::testing
