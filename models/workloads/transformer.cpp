#include "models/workloads/transformer.hpp"

#include <stdexcept>

namespace cs {

double dtype_bytes(const std::string& dtype)
{
  if (dtype == "fp32" || dtype == "tf32")
    return 4;
  if (dtype == "fp16" || dtype == "bf16")
    return 2;
  if (dtype == "fp8")
    return 1;
  throw std::invalid_argument("unknown dtype '" + dtype + "'");
}

namespace {
// A GEMM (M x K) * (K x N): 2MNK FLOPs, reads both inputs and writes the output once.
KernelWork gemm(const char* name, double m, double n, double k, const std::string& dtype)
{
  double e = dtype_bytes(dtype);
  return KernelWork{name, 2.0 * m * n * k, (m * k + k * n + m * n) * e, dtype};
}
KernelWork elementwise(const char* name, double elements, double reads, double writes, double flops_per_element,
                       const std::string& dtype)
{
  return KernelWork{name, elements * flops_per_element, elements * (reads + writes) * dtype_bytes(dtype), dtype};
}
} // namespace

std::vector<KernelWork> layer_forward_kernels(const ModelParams& m, int micro)
{
  const double tokens = double(micro) * m.seq;
  const double h = m.hidden, f = m.ffn, s = m.seq, e = dtype_bytes(m.dtype);
  std::vector<KernelWork> k;
  k.push_back(elementwise("layernorm", tokens * h, 1, 1, 5, m.dtype));
  k.push_back(gemm("qkv_gemm", tokens, 3 * h, h, m.dtype));
  // Flash-style attention: QK^T and PV GEMMs (4 b s^2 h FLOPs), reading Q, K, V and writing O once.
  k.push_back(KernelWork{"attention", 4.0 * micro * s * s * h, 4.0 * tokens * h * e, m.dtype});
  k.push_back(gemm("attn_out_gemm", tokens, h, h, m.dtype));
  k.push_back(elementwise("residual_add", tokens * h, 2, 1, 1, m.dtype));
  k.push_back(elementwise("layernorm", tokens * h, 1, 1, 5, m.dtype));
  k.push_back(gemm("ffn_up_gemm", tokens, f, h, m.dtype));
  k.push_back(elementwise("gelu", tokens * f, 1, 1, 8, m.dtype));
  k.push_back(gemm("ffn_down_gemm", tokens, h, f, m.dtype));
  k.push_back(elementwise("residual_add", tokens * h, 2, 1, 1, m.dtype));
  return k;
}

std::vector<KernelWork> head_forward_kernels(const ModelParams& m, int micro)
{
  const double tokens = double(micro) * m.seq;
  std::vector<KernelWork> k;
  k.push_back(elementwise("layernorm", tokens * m.hidden, 1, 1, 5, m.dtype));
  k.push_back(gemm("logits_gemm", tokens, m.vocab, m.hidden, m.dtype));
  k.push_back(elementwise("cross_entropy", tokens * m.vocab, 1, 1, 5, m.dtype));
  return k;
}

double layer_parameters(const ModelParams& m)
{
  const double h = m.hidden, f = m.ffn;
  return 3 * h * h + 3 * h + h * h + h + h * f + f + f * h + h + 4 * h;
}

double embedding_parameters(const ModelParams& m) { return double(m.vocab) * m.hidden + 2.0 * m.hidden; }

double total_parameters(const ModelParams& m) { return m.layers * layer_parameters(m) + embedding_parameters(m); }

double megatron_model_flops(const ModelParams& m, double global_batch)
{
  const double b = global_batch, s = m.seq, l = m.layers, h = m.hidden, v = m.vocab;
  return 72.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
}

} // namespace cs
