// Kernel descriptors: what a GPU/CPU kernel computes (GEMM, attention, norms, copies), independent of any device.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace cs {

/** C[batch] = op(A) x op(B), A is m x k, B is k x n. */
struct GemmKernel {
  double m = 0, n = 0, k = 0, batch = 1;
  std::string dtype = "bf16";
  bool trans_a = false, trans_b = false;
  /** How 8-bit operands are scaled: "" per tensor (one scale each), "blockwise" (DeepSeek-V3's 1 x 128 tiles of A
   *  and 128 x 128 blocks of B, applied in the main loop, which costs rate: the profile's gemm.scaling_rate). */
  std::string scaling = {};
  /** SMs the GEMM is launched without (Transformer Engine's set_sm_margin beside a userbuffers collective, cuBLASLt's
   *  SM count target): its tiles run in waves over the rest. */
  int sm_margin = 0;
};

/** Flash-style fused attention: reads Q, K, V once and writes O; scores never reach memory. Its backward pass
 *  (FlashAttention-2) recomputes the scores: five matmuls against the forward's two (2.5x the FLOPs), reading Q, K,
 *  V, O and dO and writing dQ, dK and dV. */
struct AttentionKernel {
  double batch = 1, heads = 1, kv_heads = 1, seq_q = 0, seq_kv = 0, head_dim = 0;
  bool causal = false;
  std::string dtype = "bf16";
  bool backward = false;
  bool triton = false; // FlashAttention written in Triton (2023), not FlashAttention-2's CUDA kernels
  bool cudnn = false;  // cuDNN's fused attention (Transformer Engine's on Hopper), not FlashAttention-2's kernels
  double v_head_dim = 0; // values' (and the output's) width per head when not head_dim (MLA: 128 against 192)
  double value_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
};

/** A bandwidth-bound op given by its traffic and arithmetic (elementwise, triad, activation). */
struct BandwidthKernel {
  std::string op = "elementwise"; // elementwise | copy | triad | gelu | ... (a label)
  double bytes_in = 0, bytes_out = 0, flops = 0;
  std::string dtype = "fp32";
};

/** Row-wise softmax over rows x cols. */
struct SoftmaxKernel {
  double rows = 0, cols = 0;
  std::string dtype = "fp32";
};

/** Row-wise LayerNorm (or RMSNorm when rms) over rows x cols. */
struct NormKernel {
  double rows = 0, cols = 0;
  bool rms = false;
  std::string dtype = "fp32";
};

/** Sum of `elements` values to one. */
struct ReductionKernel {
  double elements = 0;
  std::string dtype = "fp32";
};

/** A copy of `bytes`: d2d (device memory), h2d / d2h (over PCIe), p2p (between GPUs). */
struct MemcpyKernel {
  double bytes = 0;
  std::string direction = "d2d";
};

/** Two GEMMs run as one kernel (MCFuser): E = A x B (A m x k, B k x n), then C = E x D (D n x p). The
 *  intermediate E stays on chip; what the kernel reads depends on its tiling (models/cost/gemm_chain_model). */
struct GemmChainKernel {
  double m = 0, n = 0, k = 0, p = 0, batch = 1;
  std::string dtype = "bf16";
};

/** A micro-scaled GEMM (OCP MX formats): elements of `element` (fp8, fp6, fp4 or int8) share one 8-bit
 *  power-of-two scale per `block` values along K. Inputs held in `source` may need quantising first; on hardware
 *  without native MX the fp32 partial sums are promoted and scaled every `promotion` K values (0 = native). */
struct MxGemmKernel {
  double m = 0, n = 0, k = 0, batch = 1;
  std::string element = "fp8";
  double block = 32;
  bool quantize_a = true, quantize_b = false; // activations are quantised per GEMM; weights once per step
  std::string source = "bf16";
  double promotion = 128;
  std::string dtype = "fp8"; // the tensor-core rate the main loop runs at
};

using Kernel = std::variant<GemmKernel, AttentionKernel, BandwidthKernel, SoftmaxKernel, NormKernel, ReductionKernel,
                            MemcpyKernel, GemmChainKernel, MxGemmKernel>;

/** Bits per element of an MX element format (fp8 and int8 8, fp6 6, fp4 4); std::invalid_argument otherwise. */
double mx_element_bits(const std::string& element);

/** Bytes per element of a dtype (fp64 8, fp32/tf32 4, fp16/bf16 2, fp8 1); std::invalid_argument otherwise. */
double dtype_bytes(const std::string& dtype);

/** The kernel family name: gemm, attention, bandwidth, softmax, layernorm, rmsnorm, reduction, memcpy, gemm-chain,
 *  mx-gemm. */
std::string kernel_family(const Kernel& k);
/** Its dtype ("" for memcpy). */
std::string kernel_dtype(const Kernel& k);
/** Useful FLOPs (2mnk per GEMM, 2mn(k + p) per chain; 4 b h sq skv d for attention, halved when causal, 2.5x in
 *  backward). */
double kernel_flops(const Kernel& k);
/** Bytes read plus written to memory by an ideal implementation. */
double kernel_bytes(const Kernel& k);
/** The dimensions that identify its shape, for profiled tables (e.g. {m, n, k} x batch folded into m). */
std::vector<double> kernel_shape(const Kernel& k);
/** The key of a kernel's memory efficiency in a profile: "bandwidth/<op>" for bandwidth kernels, "memcpy/<dir>"
 *  for copies, else its family. */
std::string memory_key(const Kernel& k);
/** One-line description, e.g. "gemm m=8192 n=8192 k=8192 bf16". */
std::string describe_kernel(const Kernel& k);

/** The same kernel over `factor` times the work (batch, rows, elements or bytes scaled): a per-sample kernel run
 *  over a micro-batch, or one tensor-parallel rank's share. */
Kernel scale_kernel(const Kernel& k, double factor);

/** Builds a kernel from a family and named arguments (`predict`'s command line, measurement files).
 *  Throws std::invalid_argument naming the bad argument: unknown family, dtype or key; non-positive sizes. */
Kernel make_kernel(const std::string& family, const std::map<std::string, std::string>& args);

/** The arguments make_kernel() takes for `family` (for help and errors). */
std::vector<std::string> kernel_argument_names(const std::string& family);
const std::vector<std::string>& kernel_families();
const std::vector<std::string>& known_dtypes();

} // namespace cs
