// The CUDA microkernels' host interface (plain C++, so the driver program needs no CUDA headers).
#pragma once

#include <string>
#include <vector>

namespace cs::cuda {

/** One timed run: seconds are the median of the repeats. */
struct Sample {
  double seconds = 0, min = 0, max = 0;
  int repeats = 0;
};

struct GemmShape {
  int m, n, k;
};

/** cuBLAS GEMM (cublasGemmEx; cublasLt for fp8) on random inputs; dtype fp32 | tf32 | fp16 | bf16 | fp8.
 *  Returns an empty vector when the GPU lacks the dtype (fp8 before compute capability 8.9). */
std::vector<Sample> cublas_gemm(const std::vector<GemmShape>& shapes, const std::string& dtype, int repeats);

/** The hand-written fp32 GEMM with fixed 64 x 64 output tiles, one CTA per tile, so waves are visible. */
std::vector<Sample> tiled_gemm(const std::vector<GemmShape>& shapes, int repeats);
constexpr int kTiledGemmTile = 64;

/** STREAM copy (a = b) and triad (a = b + s c) on `n` floats. */
Sample stream_copy(long long n, int repeats);
Sample stream_triad(long long n, int repeats);
/** Elementwise GeLU over n values of dtype fp32 | bf16. */
Sample elementwise_gelu(long long n, const std::string& dtype, int repeats);
/** Row softmax and LayerNorm over rows x cols fp32. */
Sample softmax(long long rows, long long cols, int repeats);
Sample layernorm(long long rows, long long cols, int repeats);

/** cudaMemcpy of `bytes`: d2d, h2d and d2h (pinned host memory), p2p (device 0 -> 1, peer access on). */
Sample memcpy_timed(long long bytes, const std::string& direction, int repeats);

/** NCCL all-reduce or all-to-all over every visible GPU (single process), `bytes` per rank. */
Sample nccl_collective(const std::string& op, long long bytes, int repeats);

struct DeviceInfo {
  std::string name;
  int sms = 0, major = 0, minor = 0, gpus = 0;
  double clock_mhz = 0, memory_clock_mhz = 0, memory_bytes = 0;
  std::string driver, runtime, cublas, nccl;
};
/** Device 0's properties and the library versions. Throws when no GPU is visible. */
DeviceInfo device_info();

} // namespace cs::cuda
