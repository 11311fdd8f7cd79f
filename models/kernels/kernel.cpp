#include "models/kernels/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace cs {
namespace {} // namespace

double dtype_bytes(const std::string& dtype)
{
  if (dtype == "fp64")
    return 8;
  if (dtype == "fp32" || dtype == "tf32")
    return 4;
  if (dtype == "fp16" || dtype == "bf16")
    return 2;
  if (dtype == "fp8")
    return 1;
  throw std::invalid_argument("unknown dtype '" + dtype + "'");
}

double mx_element_bits(const std::string& element)
{
  if (element == "fp8" || element == "int8")
    return 8;
  if (element == "fp6")
    return 6;
  if (element == "fp4")
    return 4;
  throw std::invalid_argument("unknown MX element format '" + element + "' (expected fp8, fp6, fp4 or int8)");
}

namespace {

// Bytes of an MX operand of `elements` values: the elements and one 8-bit scale per block.
double mx_operand_bytes(const MxGemmKernel& g, double elements)
{
  return elements * mx_element_bits(g.element) / 8 + elements / g.block;
}

} // namespace

namespace {

template <class... Fs> struct Overload : Fs... {
  using Fs::operator()...;
};
template <class... Fs> Overload(Fs...) -> Overload<Fs...>;

} // namespace

const std::vector<std::string>& kernel_families()
{
  static const std::vector<std::string> f = {"gemm",    "attention", "bandwidth", "softmax",    "layernorm",
                                             "rmsnorm", "reduction", "memcpy",    "gemm-chain", "mx-gemm"};
  return f;
}

const std::vector<std::string>& known_dtypes()
{
  static const std::vector<std::string> d = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8"};
  return d;
}

std::string kernel_family(const Kernel& k)
{
  return std::visit(Overload{[](const GemmKernel&) { return std::string("gemm"); },
                             [](const AttentionKernel&) { return std::string("attention"); },
                             [](const BandwidthKernel&) { return std::string("bandwidth"); },
                             [](const SoftmaxKernel&) { return std::string("softmax"); },
                             [](const NormKernel& n) { return std::string(n.rms ? "rmsnorm" : "layernorm"); },
                             [](const ReductionKernel&) { return std::string("reduction"); },
                             [](const MemcpyKernel&) { return std::string("memcpy"); },
                             [](const GemmChainKernel&) { return std::string("gemm-chain"); },
                             [](const MxGemmKernel&) { return std::string("mx-gemm"); }},
                    k);
}

std::string kernel_dtype(const Kernel& k)
{
  return std::visit(Overload{[](const MemcpyKernel&) { return std::string(); }, [](const auto& x) { return x.dtype; }},
                    k);
}

double kernel_flops(const Kernel& k)
{
  return std::visit(Overload{[](const GemmKernel& g) { return 2.0 * g.m * g.n * g.k * g.batch; },
                             [](const AttentionKernel& a) {
                               // Forward: the scores over head_dim, the values over value_dim (QK^T, PV). Backward
                               // recomputes the scores and forms dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q:
                               // three products over head_dim and two over value_dim (2.5x forward when equal).
                               const double d = a.head_dim, dv = a.value_dim();
                               double f = 2.0 * a.batch * a.heads * a.seq_q * a.seq_kv;
                               f *= a.backward ? 3 * d + 2 * dv : d + dv;
                               return a.causal ? f / 2 : f;
                             },
                             [](const BandwidthKernel& b) { return b.flops; },
                             [](const SoftmaxKernel& s) { return 5.0 * s.rows * s.cols; },
                             [](const NormKernel& n) { return (n.rms ? 4.0 : 7.0) * n.rows * n.cols; },
                             [](const ReductionKernel& r) { return r.elements; },
                             [](const MemcpyKernel&) { return 0.0; },
                             [](const GemmChainKernel& c) { return 2.0 * c.m * c.n * (c.k + c.p) * c.batch; },
                             [](const MxGemmKernel& g) { return 2.0 * g.m * g.n * g.k * g.batch; }},
                    k);
}

double kernel_bytes(const Kernel& k)
{
  return std::visit(
      Overload{[](const GemmKernel& g) { return (g.m * g.k + g.k * g.n + g.m * g.n) * g.batch * dtype_bytes(g.dtype); },
               [](const AttentionKernel& a) {
                 const double e = dtype_bytes(a.dtype), passes = a.backward ? 2.0 : 1.0;
                 // Queries and keys of head_dim, values and the output of value_dim.
                 return passes * a.batch * (a.head_dim + a.value_dim()) * e *
                        (a.heads * a.seq_q + a.kv_heads * a.seq_kv);
               },
               [](const BandwidthKernel& b) { return b.bytes_in + b.bytes_out; },
               [](const SoftmaxKernel& s) { return 2.0 * s.rows * s.cols * dtype_bytes(s.dtype); },
               [](const NormKernel& n) { return 2.0 * n.rows * n.cols * dtype_bytes(n.dtype); },
               [](const ReductionKernel& r) { return r.elements * dtype_bytes(r.dtype); },
               // A device-to-device copy reads and writes every byte; other directions cross one link once.
               [](const MemcpyKernel& m) { return m.direction == "d2d" ? 2.0 * m.bytes : m.bytes; },
               // A fused chain at best reads its three inputs once and writes its output; E never leaves the chip.
               [](const GemmChainKernel& c) {
                 return (c.m * c.k + c.k * c.n + c.n * c.p + c.m * c.p) * c.batch * dtype_bytes(c.dtype);
               },
               [](const MxGemmKernel& g) {
                 return (mx_operand_bytes(g, g.m * g.k) + mx_operand_bytes(g, g.k * g.n) +
                         g.m * g.n * dtype_bytes(g.source)) *
                        g.batch;
               }},
      k);
}

std::vector<double> kernel_shape(const Kernel& k)
{
  return std::visit(Overload{[](const GemmKernel& g) {
                               return std::vector<double>{g.m * g.batch, g.n, g.k};
                             },
                             [](const AttentionKernel& a) {
                               return std::vector<double>{a.batch * a.heads, a.seq_q, a.seq_kv, a.head_dim};
                             },
                             [](const BandwidthKernel& b) { return std::vector<double>{b.bytes_in + b.bytes_out}; },
                             [](const SoftmaxKernel& s) {
                               return std::vector<double>{s.rows, s.cols};
                             },
                             [](const NormKernel& n) {
                               return std::vector<double>{n.rows, n.cols};
                             },
                             [](const ReductionKernel& r) { return std::vector<double>{r.elements}; },
                             [](const MemcpyKernel& m) { return std::vector<double>{m.bytes}; },
                             [](const GemmChainKernel& c) {
                               return std::vector<double>{c.m * c.batch, c.n, c.k, c.p};
                             },
                             [](const MxGemmKernel& g) {
                               return std::vector<double>{g.m * g.batch, g.n, g.k};
                             }},
                    k);
}

std::string memory_key(const Kernel& k)
{
  if (const auto* b = std::get_if<BandwidthKernel>(&k))
    return "bandwidth/" + b->op;
  if (const auto* m = std::get_if<MemcpyKernel>(&k))
    return "memcpy/" + m->direction;
  return kernel_family(k);
}

std::string describe_kernel(const Kernel& k)
{
  return std::visit(
      Overload{
          [](const GemmKernel& g) {
            return fmt::format("gemm m={} n={} k={}{} {}{}", g.m, g.n, g.k,
                               g.batch != 1 ? fmt::format(" batch={}", g.batch) : "", g.dtype,
                               g.scaling.empty() ? "" : " " + g.scaling + "-scaled");
          },
          [](const AttentionKernel& a) {
            return fmt::format("attention{} batch={} heads={} kv_heads={} seq_q={} seq_kv={} head_dim={}{}{}{} {}",
                               a.backward ? " backward" : "", a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv,
                               a.head_dim, a.v_head_dim > 0 ? fmt::format(" v_head_dim={}", a.v_head_dim) : "",
                               a.causal ? " causal" : "",
                               a.triton  ? " triton"
                               : a.cudnn ? " cudnn"
                                         : "",
                               a.dtype);
          },
          [](const BandwidthKernel& b) {
            return fmt::format("bandwidth op={} bytes_in={} bytes_out={} flops={} {}", b.op, b.bytes_in, b.bytes_out,
                               b.flops, b.dtype);
          },
          [](const SoftmaxKernel& s) { return fmt::format("softmax rows={} cols={} {}", s.rows, s.cols, s.dtype); },
          [](const NormKernel& n) {
            return fmt::format("{} rows={} cols={} {}", n.rms ? "rmsnorm" : "layernorm", n.rows, n.cols, n.dtype);
          },
          [](const ReductionKernel& r) { return fmt::format("reduction elements={} {}", r.elements, r.dtype); },
          [](const MemcpyKernel& m) { return fmt::format("memcpy {} bytes={}", m.direction, m.bytes); },
          [](const GemmChainKernel& c) {
            return fmt::format("gemm-chain m={} n={} k={} p={}{} {}", c.m, c.n, c.k, c.p,
                               c.batch != 1 ? fmt::format(" batch={}", c.batch) : "", c.dtype);
          },
          [](const MxGemmKernel& g) {
            return fmt::format("mx-gemm m={} n={} k={}{} mx{} block={} quantize_a={} quantize_b={} source={} "
                               "promotion={}",
                               g.m, g.n, g.k, g.batch != 1 ? fmt::format(" batch={}", g.batch) : "", g.element, g.block,
                               g.quantize_a, g.quantize_b, g.source, g.promotion);
          }},
      k);
}

Kernel scale_kernel(const Kernel& k, double f)
{
  return std::visit(Overload{[f](GemmKernel g) -> Kernel { return g.batch *= f, g; },
                             [f](AttentionKernel a) -> Kernel { return a.batch *= f, a; },
                             [f](BandwidthKernel b) -> Kernel {
                               b.bytes_in *= f;
                               b.bytes_out *= f;
                               b.flops *= f;
                               return b;
                             },
                             [f](SoftmaxKernel s) -> Kernel { return s.rows *= f, s; },
                             [f](NormKernel n) -> Kernel { return n.rows *= f, n; },
                             [f](ReductionKernel r) -> Kernel { return r.elements *= f, r; },
                             [f](MemcpyKernel m) -> Kernel { return m.bytes *= f, m; },
                             [f](GemmChainKernel c) -> Kernel { return c.batch *= f, c; },
                             [f](MxGemmKernel g) -> Kernel { return g.batch *= f, g; }},
                    k);
}

std::vector<std::string> kernel_argument_names(const std::string& family)
{
  if (family == "gemm")
    return {"m", "n", "k", "batch", "dtype", "trans_a", "trans_b", "scaling"};
  if (family == "attention")
    return {"batch",      "heads",  "kv_heads", "seq_q",  "seq_kv", "head_dim",
            "v_head_dim", "causal", "backward", "triton", "cudnn",  "dtype"};
  if (family == "bandwidth")
    return {"op", "bytes_in", "bytes_out", "flops", "dtype"};
  if (family == "softmax" || family == "layernorm" || family == "rmsnorm")
    return {"rows", "cols", "dtype"};
  if (family == "reduction")
    return {"elements", "dtype"};
  if (family == "memcpy")
    return {"bytes", "direction"};
  if (family == "gemm-chain")
    return {"m", "n", "k", "p", "batch", "dtype"};
  if (family == "mx-gemm")
    return {"m", "n", "k", "batch", "element", "block", "quantize_a", "quantize_b", "source", "promotion"};
  return {};
}

namespace {

// The --key value arguments of one kernel family, read with their checks.
class KernelArgs {
public:
  KernelArgs(const std::string& family, const std::map<std::string, std::string>& args) : family_(family), args_(args)
  {}
  std::string text(const char* key, const std::string& fallback) const
  {
    auto it = args_.find(key);
    return it == args_.end() ? fallback : it->second;
  }
  // A positive finite number; `required` ones have no fallback.
  double number(const char* key, double fallback, bool required) const
  {
    auto it = args_.find(key);
    if (it == args_.end()) {
      if (required)
        throw std::invalid_argument(fmt::format("{} needs --{}", family_, key));
      return fallback;
    }
    const double v = parse(key, it->second);
    if (!(v > 0) || !std::isfinite(v))
      throw std::invalid_argument(fmt::format("--{} must be positive, got {}", key, it->second));
    return bounded(key, v);
  }
  // A number that may be zero (a pure read moves no bytes out), or `fallback` when absent.
  double non_negative(const char* key, double fallback) const
  {
    auto it = args_.find(key);
    if (it == args_.end())
      return fallback;
    const double v = parse(key, it->second);
    if (!(v >= 0) || !std::isfinite(v))
      throw std::invalid_argument(fmt::format("--{} must not be negative", key));
    return bounded(key, v);
  }
  bool flag(const char* key, bool fallback = false) const
  {
    const std::string v = text(key, fallback ? "true" : "false");
    if (v == "true" || v == "1" || v == "yes")
      return true;
    if (v == "false" || v == "0" || v == "no")
      return false;
    throw std::invalid_argument(fmt::format("--{} must be true or false, got '{}'", key, v));
  }
  std::string dtype(const std::string& fallback) const
  {
    const std::string d = text("dtype", fallback);
    const auto& known = known_dtypes();
    if (std::find(known.begin(), known.end(), d) == known.end())
      throw std::invalid_argument("unknown dtype '" + d + "' (expected fp64, fp32, tf32, bf16, fp16 or fp8)");
    return d;
  }

private:
  // Every dimension, count and size at most 2^40 (about 1.1e12): the products the models form stay finite.
  static double bounded(const char* key, double v)
  {
    if (v > 1099511627776.0)
      throw std::invalid_argument(fmt::format("--{} must be at most 2^40 (1099511627776), got {}", key, v));
    return v;
  }
  static double parse(const char* key, const std::string& text)
  {
    try {
      std::size_t used = 0;
      const double v = std::stod(text, &used);
      if (used == text.size())
        return v;
    } catch (const std::exception&) {
    }
    throw std::invalid_argument(fmt::format("--{} must be a number, got '{}'", key, text));
  }
  const std::string& family_;
  const std::map<std::string, std::string>& args_;
};

void check_argument_names(const std::string& family, const std::map<std::string, std::string>& args)
{
  const auto allowed = kernel_argument_names(family);
  if (allowed.empty()) {
    std::string valid;
    for (const auto& f : kernel_families())
      valid += (valid.empty() ? "" : ", ") + f;
    throw std::invalid_argument("unknown kernel '" + family + "' (expected one of: " + valid + ")");
  }
  for (const auto& [key, value] : args)
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string valid;
      for (const auto& a : allowed)
        valid += (valid.empty() ? "--" : ", --") + a;
      throw std::invalid_argument(fmt::format("{} takes no argument --{} (it takes {})", family, key, valid));
    }
}

MxGemmKernel make_mx_gemm(const KernelArgs& a)
{
  MxGemmKernel g{a.number("m", 0, true), a.number("n", 0, true), a.number("k", 0, true), a.number("batch", 1, false)};
  g.element = a.text("element", "fp8");
  mx_element_bits(g.element); // throws for an unknown format
  g.block = a.number("block", 32, false);
  if (g.block < 1)
    throw std::invalid_argument("--block must be at least 1 value per scale");
  g.quantize_a = a.flag("quantize_a", true);
  g.quantize_b = a.flag("quantize_b", false);
  g.source = a.text("source", "bf16");
  if (g.source != "bf16" && g.source != "fp16" && g.source != "fp32")
    throw std::invalid_argument("--source must be bf16, fp16 or fp32, got '" + g.source + "'");
  g.promotion = a.non_negative("promotion", 128);
  return g;
}

} // namespace

Kernel make_kernel(const std::string& family, const std::map<std::string, std::string>& args)
{
  check_argument_names(family, args);
  const KernelArgs a(family, args);
  if (family == "gemm") {
    GemmKernel g{a.number("m", 0, true), a.number("n", 0, true), a.number("k", 0, true), a.number("batch", 1, false),
                 a.dtype("bf16"),        a.flag("trans_a"),      a.flag("trans_b")};
    g.scaling = a.text("scaling", "");
    if (g.scaling == "tensorwise")
      g.scaling.clear();
    if (!g.scaling.empty() && g.scaling != "blockwise")
      throw std::invalid_argument("--scaling must be tensorwise or blockwise, got '" + g.scaling + "'");
    if (!g.scaling.empty() && g.dtype != "fp8")
      throw std::invalid_argument("--scaling blockwise is for fp8 GEMMs, got dtype " + g.dtype);
    return g;
  }
  if (family == "attention") {
    const double heads = a.number("heads", 0, true), seq_q = a.number("seq_q", 0, true);
    return AttentionKernel{a.number("batch", 1, false),
                           heads,
                           a.number("kv_heads", heads, false),
                           seq_q,
                           a.number("seq_kv", seq_q, false),
                           a.number("head_dim", 0, true),
                           a.flag("causal"),
                           a.dtype("bf16"),
                           a.flag("backward"),
                           a.flag("triton"),
                           a.flag("cudnn"),
                           a.non_negative("v_head_dim", 0)};
  }
  if (family == "bandwidth")
    return BandwidthKernel{a.text("op", "elementwise"), a.number("bytes_in", 0, true), a.non_negative("bytes_out", 0),
                           a.non_negative("flops", 0), a.dtype("fp32")};
  if (family == "softmax")
    return SoftmaxKernel{a.number("rows", 0, true), a.number("cols", 0, true), a.dtype("fp32")};
  if (family == "layernorm" || family == "rmsnorm")
    return NormKernel{a.number("rows", 0, true), a.number("cols", 0, true), family == "rmsnorm", a.dtype("fp32")};
  if (family == "reduction")
    return ReductionKernel{a.number("elements", 0, true), a.dtype("fp32")};
  if (family == "gemm-chain")
    return GemmChainKernel{a.number("m", 0, true), a.number("n", 0, true),      a.number("k", 0, true),
                           a.number("p", 0, true), a.number("batch", 1, false), a.dtype("bf16")};
  if (family == "mx-gemm")
    return make_mx_gemm(a);
  const std::string dir = a.text("direction", "d2d");
  if (dir != "d2d" && dir != "h2d" && dir != "d2h" && dir != "p2p")
    throw std::invalid_argument("--direction must be d2d, h2d, d2h or p2p, got '" + dir + "'");
  return MemcpyKernel{a.number("bytes", 0, true), dir};
}

} // namespace cs
