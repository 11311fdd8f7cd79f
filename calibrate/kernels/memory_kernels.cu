// Bandwidth-bound microkernels: STREAM copy and triad, GeLU, row softmax, LayerNorm.
#include "calibrate/kernels/cuda_kernels.hpp"
#include "calibrate/kernels/cuda_timing.cuh"

#include <cuda_bf16.h>

namespace cs::cuda {
namespace {

__global__ void init(float* p, long long n, float scale)
{
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    p[i] = scale * static_cast<float>((i * 7919) % 1000) / 1000.0f;
}

__global__ void copy_kernel(float* a, const float* b, long long n)
{
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    a[i] = b[i];
}

__global__ void triad_kernel(float* a, const float* b, const float* c, float s, long long n)
{
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    a[i] = b[i] + s * c[i];
}

template <class T> __global__ void gelu_kernel(T* out, const T* in, long long n)
{
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float x = static_cast<float>(in[i]);
    out[i] = static_cast<T>(0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x))));
  }
}

// One CTA per row: max, sum of exponentials, normalise (three passes over the row, the row mostly in L1/L2).
__global__ void softmax_kernel(float* out, const float* in, long long cols)
{
  __shared__ float red[32];
  const float* row = in + blockIdx.x * cols;
  float* dst = out + blockIdx.x * cols;
  float m = -INFINITY;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    m = fmaxf(m, row[c]);
  for (int o = 16; o > 0; o /= 2)
    m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  if (threadIdx.x % 32 == 0)
    red[threadIdx.x / 32] = m;
  __syncthreads();
  m = -INFINITY;
  for (int w = 0; w < blockDim.x / 32; ++w)
    m = fmaxf(m, red[w]);
  __syncthreads();
  float s = 0;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    s += __expf(row[c] - m);
  for (int o = 16; o > 0; o /= 2)
    s += __shfl_xor_sync(0xffffffff, s, o);
  if (threadIdx.x % 32 == 0)
    red[threadIdx.x / 32] = s;
  __syncthreads();
  s = 0;
  for (int w = 0; w < blockDim.x / 32; ++w)
    s += red[w];
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    dst[c] = __expf(row[c] - m) / s;
}

// One CTA per row: mean and variance in one pass (sum and sum of squares), then normalise.
__global__ void layernorm_kernel(float* out, const float* in, long long cols)
{
  __shared__ float red[2][32];
  const float* row = in + blockIdx.x * cols;
  float* dst = out + blockIdx.x * cols;
  float s = 0, q = 0;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x) {
    float x = row[c];
    s += x;
    q += x * x;
  }
  for (int o = 16; o > 0; o /= 2) {
    s += __shfl_xor_sync(0xffffffff, s, o);
    q += __shfl_xor_sync(0xffffffff, q, o);
  }
  if (threadIdx.x % 32 == 0) {
    red[0][threadIdx.x / 32] = s;
    red[1][threadIdx.x / 32] = q;
  }
  __syncthreads();
  s = q = 0;
  for (int w = 0; w < blockDim.x / 32; ++w) {
    s += red[0][w];
    q += red[1][w];
  }
  const float mean = s / cols, inv = rsqrtf(q / cols - mean * mean + 1e-5f);
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    dst[c] = (row[c] - mean) * inv;
}

unsigned grid_for(long long n)
{
  int device = 0, sms = 0;
  CS_CUDA(cudaGetDevice(&device));
  CS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  long long blocks = (n + 255) / 256;
  return static_cast<unsigned>(std::min<long long>(blocks, 32LL * sms));
}

float* buffer(long long n, float scale)
{
  float* p = nullptr;
  CS_CUDA(cudaMalloc(&p, n * sizeof(float)));
  init<<<grid_for(n), 256>>>(p, n, scale);
  CS_CUDA(cudaGetLastError());
  return p;
}

Sample to_sample(const Timed& t) { return Sample{t.median, t.min, t.max, t.repeats}; }

} // namespace

Sample stream_copy(long long n, int repeats)
{
  float *a = buffer(n, 0), *b = buffer(n, 1);
  Timed t = time_on_stream(nullptr, 5, repeats, [&] {
    copy_kernel<<<grid_for(n), 256>>>(a, b, n);
    CS_CUDA(cudaGetLastError());
  });
  CS_CUDA(cudaFree(a));
  CS_CUDA(cudaFree(b));
  return to_sample(t);
}

Sample stream_triad(long long n, int repeats)
{
  float *a = buffer(n, 0), *b = buffer(n, 1), *c = buffer(n, 2);
  Timed t = time_on_stream(nullptr, 5, repeats, [&] {
    triad_kernel<<<grid_for(n), 256>>>(a, b, c, 3.0f, n);
    CS_CUDA(cudaGetLastError());
  });
  CS_CUDA(cudaFree(a));
  CS_CUDA(cudaFree(b));
  CS_CUDA(cudaFree(c));
  return to_sample(t);
}

Sample elementwise_gelu(long long n, const std::string& dtype, int repeats)
{
  Timed t;
  if (dtype == "bf16") {
    __nv_bfloat16 *in = nullptr, *out = nullptr;
    CS_CUDA(cudaMalloc(&in, n * sizeof(__nv_bfloat16)));
    CS_CUDA(cudaMalloc(&out, n * sizeof(__nv_bfloat16)));
    CS_CUDA(cudaMemset(in, 0, n * sizeof(__nv_bfloat16)));
    t = time_on_stream(nullptr, 5, repeats, [&] {
      gelu_kernel<<<grid_for(n), 256>>>(out, in, n);
      CS_CUDA(cudaGetLastError());
    });
    CS_CUDA(cudaFree(in));
    CS_CUDA(cudaFree(out));
  } else {
    float *in = buffer(n, 1), *out = buffer(n, 0);
    t = time_on_stream(nullptr, 5, repeats, [&] {
      gelu_kernel<<<grid_for(n), 256>>>(out, in, n);
      CS_CUDA(cudaGetLastError());
    });
    CS_CUDA(cudaFree(in));
    CS_CUDA(cudaFree(out));
  }
  return to_sample(t);
}

Sample softmax(long long rows, long long cols, int repeats)
{
  float *in = buffer(rows * cols, 4), *out = buffer(rows * cols, 0);
  Timed t = time_on_stream(nullptr, 5, repeats, [&] {
    softmax_kernel<<<static_cast<unsigned>(rows), 256>>>(out, in, cols);
    CS_CUDA(cudaGetLastError());
  });
  CS_CUDA(cudaFree(in));
  CS_CUDA(cudaFree(out));
  return to_sample(t);
}

Sample layernorm(long long rows, long long cols, int repeats)
{
  float *in = buffer(rows * cols, 2), *out = buffer(rows * cols, 0);
  Timed t = time_on_stream(nullptr, 5, repeats, [&] {
    layernorm_kernel<<<static_cast<unsigned>(rows), 256>>>(out, in, cols);
    CS_CUDA(cudaGetLastError());
  });
  CS_CUDA(cudaFree(in));
  CS_CUDA(cudaFree(out));
  return to_sample(t);
}

} // namespace cs::cuda
