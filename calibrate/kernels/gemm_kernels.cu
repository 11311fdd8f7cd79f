// GEMM microkernels: cuBLAS per dtype (cublasLt for fp8) and a hand-written tiled fp32 GEMM whose tiles are known.
#include "calibrate/kernels/cuda_kernels.hpp"
#include "calibrate/kernels/cuda_timing.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace cs::cuda {
namespace {

// Seeded pseudo-random fill in [-1, 1) (a hash of the index), so inputs are neither zeros nor denormals.
template <class T> __global__ void fill_random(T* data, long long n, unsigned seed)
{
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n)
    return;
  unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  data[i] = static_cast<T>(static_cast<float>(x & 0xffffff) / 8388608.0f - 1.0f);
}

template <class T> T* random_buffer(long long n, unsigned seed)
{
  T* p = nullptr;
  CS_CUDA(cudaMalloc(&p, n * sizeof(T)));
  fill_random<<<static_cast<unsigned>((n + 255) / 256), 256>>>(p, n, seed);
  CS_CUDA(cudaGetLastError());
  return p;
}

Sample to_sample(const Timed& t) { return Sample{t.median, t.min, t.max, t.repeats}; }

struct Types {
  cudaDataType_t ab, c;
  cublasComputeType_t compute;
  int bytes;
};

Types types_of(const std::string& dtype)
{
  if (dtype == "fp32")
    return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4};
  if (dtype == "tf32")
    return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4};
  if (dtype == "fp16")
    return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2};
  if (dtype == "bf16")
    return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2};
  throw std::runtime_error("cublas_gemm: unsupported dtype " + dtype);
}

std::vector<Sample> cublaslt_fp8(const std::vector<GemmShape>& shapes, int repeats)
{
  cublasLtHandle_t lt;
  CS_CUDA(cublasLtCreate(&lt));
  const size_t workspace_bytes = 64ull << 20;
  void* workspace = nullptr;
  CS_CUDA(cudaMalloc(&workspace, workspace_bytes));
  std::vector<Sample> out;
  for (const auto& s : shapes) {
    // FP8 needs the "TN" layout: A stored k x m and transposed, B k x n, D m x n in bf16.
    auto* a = random_buffer<__nv_fp8_e4m3>(static_cast<long long>(s.k) * s.m, 1);
    auto* b = random_buffer<__nv_fp8_e4m3>(static_cast<long long>(s.k) * s.n, 2);
    __nv_bfloat16* d = nullptr;
    CS_CUDA(cudaMalloc(&d, static_cast<size_t>(s.m) * s.n * sizeof(__nv_bfloat16)));
    cublasLtMatmulDesc_t op;
    CS_CUDA(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CS_CUDA(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CS_CUDA(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    cublasLtMatrixLayout_t la, lb, ld;
    CS_CUDA(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, s.k, s.m, s.k));
    CS_CUDA(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, s.k, s.n, s.k));
    CS_CUDA(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, s.m, s.n, s.m));
    cublasLtMatmulPreference_t pref;
    CS_CUDA(cublasLtMatmulPreferenceCreate(&pref));
    CS_CUDA(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                 sizeof workspace_bytes));
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    CS_CUDA(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found));
    if (found == 0)
      throw std::runtime_error("cublasLt found no fp8 algorithm");
    const float alpha = 1.0f, beta = 0.0f;
    Timed t = time_on_stream(nullptr, 10, repeats, [&] {
      CS_CUDA(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &heuristic.algo, workspace,
                             workspace_bytes, nullptr));
    });
    out.push_back(to_sample(t));
    CS_CUDA(cublasLtMatmulPreferenceDestroy(pref));
    CS_CUDA(cublasLtMatrixLayoutDestroy(la));
    CS_CUDA(cublasLtMatrixLayoutDestroy(lb));
    CS_CUDA(cublasLtMatrixLayoutDestroy(ld));
    CS_CUDA(cublasLtMatmulDescDestroy(op));
    CS_CUDA(cudaFree(a));
    CS_CUDA(cudaFree(b));
    CS_CUDA(cudaFree(d));
  }
  CS_CUDA(cudaFree(workspace));
  CS_CUDA(cublasLtDestroy(lt));
  return out;
}

// C = A B with A m x k, B k x n, all row-major fp32. Each 256-thread CTA computes one 64 x 64 tile of C, each
// thread a 4 x 4 block, staging 64 x 16 slices of A and B in shared memory.
__global__ void tiled_gemm_kernel(const float* A, const float* B, float* C, int m, int n, int k)
{
  constexpr int T = kTiledGemmTile, KS = 16;
  __shared__ float as[KS][T];
  __shared__ float bs[KS][T];
  const int row0 = blockIdx.y * T, col0 = blockIdx.x * T;
  const int tr = (threadIdx.x / 16) * 4, tc = (threadIdx.x % 16) * 4;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < k; k0 += KS) {
    for (int i = threadIdx.x; i < T * KS; i += blockDim.x) {
      int r = i / KS, c = i % KS; // A slice: T rows x KS cols, stored transposed
      int gr = row0 + r, gc = k0 + c;
      as[c][r] = (gr < m && gc < k) ? A[static_cast<long long>(gr) * k + gc] : 0.0f;
      int br = i / T, bc = i % T; // B slice: KS rows x T cols
      int gbr = k0 + br, gbc = col0 + bc;
      bs[br][bc] = (gbr < k && gbc < n) ? B[static_cast<long long>(gbr) * n + gbc] : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < KS; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][j] += as[kk][tr + i] * bs[kk][tc + j];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      int r = row0 + tr + i, c = col0 + tc + j;
      if (r < m && c < n)
        C[static_cast<long long>(r) * n + c] = acc[i][j];
    }
}

} // namespace

std::vector<Sample> cublas_gemm(const std::vector<GemmShape>& shapes, const std::string& dtype, int repeats)
{
  int device = 0, major = 0, minor = 0;
  CS_CUDA(cudaGetDevice(&device));
  CS_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CS_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (dtype == "fp8")
    return major * 10 + minor >= 89 ? cublaslt_fp8(shapes, repeats) : std::vector<Sample>{};
  if ((dtype == "bf16" || dtype == "tf32") && major < 8)
    return {};
  const Types ty = types_of(dtype);
  cublasHandle_t handle;
  CS_CUDA(cublasCreate(&handle));
  std::vector<Sample> out;
  for (const auto& s : shapes) {
    void *a = nullptr, *b = nullptr, *c = nullptr;
    const long long na = static_cast<long long>(s.m) * s.k, nb = static_cast<long long>(s.k) * s.n;
    if (ty.bytes == 4) {
      a = random_buffer<float>(na, 1);
      b = random_buffer<float>(nb, 2);
    } else if (dtype == "fp16") {
      a = random_buffer<__half>(na, 1);
      b = random_buffer<__half>(nb, 2);
    } else {
      a = random_buffer<__nv_bfloat16>(na, 1);
      b = random_buffer<__nv_bfloat16>(nb, 2);
    }
    CS_CUDA(cudaMalloc(&c, static_cast<size_t>(s.m) * s.n * ty.bytes));
    const float alpha = 1.0f, beta = 0.0f;
    // Column-major cuBLAS: C (m x n) = A (m x k) B (k x n).
    Timed t = time_on_stream(nullptr, 10, repeats, [&] {
      CS_CUDA(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.m, s.n, s.k, &alpha, a, ty.ab, s.m, b, ty.ab, s.k, &beta,
                           c, ty.c, s.m, ty.compute, CUBLAS_GEMM_DEFAULT));
    });
    out.push_back(to_sample(t));
    CS_CUDA(cudaFree(a));
    CS_CUDA(cudaFree(b));
    CS_CUDA(cudaFree(c));
  }
  CS_CUDA(cublasDestroy(handle));
  return out;
}

std::vector<Sample> tiled_gemm(const std::vector<GemmShape>& shapes, int repeats)
{
  std::vector<Sample> out;
  for (const auto& s : shapes) {
    float* a = random_buffer<float>(static_cast<long long>(s.m) * s.k, 3);
    float* b = random_buffer<float>(static_cast<long long>(s.k) * s.n, 4);
    float* c = nullptr;
    CS_CUDA(cudaMalloc(&c, static_cast<size_t>(s.m) * s.n * sizeof(float)));
    dim3 grid((s.n + kTiledGemmTile - 1) / kTiledGemmTile, (s.m + kTiledGemmTile - 1) / kTiledGemmTile);
    Timed t = time_on_stream(nullptr, 3, repeats, [&] {
      tiled_gemm_kernel<<<grid, 256>>>(a, b, c, s.m, s.n, s.k);
      CS_CUDA(cudaGetLastError());
    });
    out.push_back(to_sample(t));
    CS_CUDA(cudaFree(a));
    CS_CUDA(cudaFree(b));
    CS_CUDA(cudaFree(c));
  }
  return out;
}

} // namespace cs::cuda
