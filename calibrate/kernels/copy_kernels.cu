// Copies (device, host, peer) and NCCL collectives, plus the device and library description of a run.
#include "calibrate/kernels/cuda_kernels.hpp"
#include "calibrate/kernels/cuda_timing.cuh"

#include <nccl.h>

namespace cs::cuda {
namespace {

void check_nccl(ncclResult_t r, const char* what, const char* file, int line)
{
  if (r != ncclSuccess)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                             ncclGetErrorString(r));
}
#define CS_NCCL(call) check_nccl((call), #call, __FILE__, __LINE__)

Sample to_sample(const Timed& t) { return Sample{t.median, t.min, t.max, t.repeats}; }

} // namespace

Sample memcpy_timed(long long bytes, const std::string& direction, int repeats)
{
  void *src = nullptr, *dst = nullptr;
  cudaMemcpyKind kind = cudaMemcpyDeviceToDevice;
  int src_device = 0, dst_device = 0;
  if (direction == "h2d") {
    CS_CUDA(cudaMallocHost(&src, bytes));
    CS_CUDA(cudaMalloc(&dst, bytes));
    kind = cudaMemcpyHostToDevice;
  } else if (direction == "d2h") {
    CS_CUDA(cudaMalloc(&src, bytes));
    CS_CUDA(cudaMallocHost(&dst, bytes));
    kind = cudaMemcpyDeviceToHost;
  } else if (direction == "p2p") {
    dst_device = 1;
    CS_CUDA(cudaSetDevice(1));
    CS_CUDA(cudaMalloc(&dst, bytes));
    CS_CUDA(cudaDeviceEnablePeerAccess(0, 0));
    CS_CUDA(cudaSetDevice(0));
    CS_CUDA(cudaDeviceEnablePeerAccess(1, 0));
    CS_CUDA(cudaMalloc(&src, bytes));
  } else {
    CS_CUDA(cudaMalloc(&src, bytes));
    CS_CUDA(cudaMalloc(&dst, bytes));
  }
  Timed t = time_on_stream(nullptr, 3, repeats, [&] {
    if (direction == "p2p")
      CS_CUDA(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, bytes, nullptr));
    else
      CS_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, nullptr));
  });
  if (direction == "h2d") {
    CS_CUDA(cudaFreeHost(src));
    CS_CUDA(cudaFree(dst));
  } else if (direction == "d2h") {
    CS_CUDA(cudaFree(src));
    CS_CUDA(cudaFreeHost(dst));
  } else {
    CS_CUDA(cudaFree(src));
    CS_CUDA(cudaFree(dst));
  }
  if (direction == "p2p") {
    CS_CUDA(cudaDeviceDisablePeerAccess(1));
    CS_CUDA(cudaSetDevice(1));
    CS_CUDA(cudaDeviceDisablePeerAccess(0));
    CS_CUDA(cudaSetDevice(0));
  }
  return to_sample(t);
}

Sample nccl_collective(const std::string& op, long long bytes, int repeats)
{
  int gpus = 0;
  CS_CUDA(cudaGetDeviceCount(&gpus));
  if (gpus < 2)
    throw std::runtime_error("NCCL collectives need at least 2 GPUs");
  std::vector<ncclComm_t> comms(gpus);
  CS_NCCL(ncclCommInitAll(comms.data(), gpus, nullptr));
  std::vector<float*> send(gpus), recv(gpus);
  std::vector<cudaStream_t> streams(gpus);
  const size_t count = static_cast<size_t>(bytes) / sizeof(float);
  for (int g = 0; g < gpus; ++g) {
    CS_CUDA(cudaSetDevice(g));
    CS_CUDA(cudaMalloc(&send[g], count * sizeof(float)));
    CS_CUDA(cudaMalloc(&recv[g], count * sizeof(float)));
    CS_CUDA(cudaMemset(send[g], 0, count * sizeof(float)));
    CS_CUDA(cudaStreamCreate(&streams[g]));
  }
  auto launch = [&] {
    CS_NCCL(ncclGroupStart());
    for (int g = 0; g < gpus; ++g) {
      if (op == "all_reduce") {
        CS_NCCL(ncclAllReduce(send[g], recv[g], count, ncclFloat, ncclSum, comms[g], streams[g]));
      } else {
        const size_t chunk = count / gpus;
        for (int peer = 0; peer < gpus; ++peer) {
          CS_NCCL(ncclSend(send[g] + peer * chunk, chunk, ncclFloat, peer, comms[g], streams[g]));
          CS_NCCL(ncclRecv(recv[g] + peer * chunk, chunk, ncclFloat, peer, comms[g], streams[g]));
        }
      }
    }
    CS_NCCL(ncclGroupEnd());
    for (int g = 0; g < gpus; ++g) {
      CS_CUDA(cudaSetDevice(g));
      CS_CUDA(cudaStreamSynchronize(streams[g]));
    }
    CS_CUDA(cudaSetDevice(0));
  };
  // Host-synchronised timing: each sample waits for every GPU, as nccl-tests' blocking mode does.
  Timed t = time_on_stream(nullptr, 5, repeats, launch);
  for (int g = 0; g < gpus; ++g) {
    CS_CUDA(cudaSetDevice(g));
    CS_CUDA(cudaFree(send[g]));
    CS_CUDA(cudaFree(recv[g]));
    CS_CUDA(cudaStreamDestroy(streams[g]));
    CS_NCCL(ncclCommDestroy(comms[g]));
  }
  CS_CUDA(cudaSetDevice(0));
  return to_sample(t);
}

DeviceInfo device_info()
{
  DeviceInfo info;
  CS_CUDA(cudaGetDeviceCount(&info.gpus));
  if (info.gpus == 0)
    throw std::runtime_error("no CUDA device is visible");
  cudaDeviceProp p{};
  CS_CUDA(cudaGetDeviceProperties(&p, 0));
  info.name = p.name;
  info.sms = p.multiProcessorCount;
  info.major = p.major;
  info.minor = p.minor;
  int clock_khz = 0, memory_khz = 0;
  CS_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  CS_CUDA(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, 0));
  info.clock_mhz = clock_khz / 1000.0;
  info.memory_clock_mhz = memory_khz / 1000.0;
  info.memory_bytes = static_cast<double>(p.totalGlobalMem);
  int driver = 0, runtime = 0;
  CS_CUDA(cudaDriverGetVersion(&driver));
  CS_CUDA(cudaRuntimeGetVersion(&runtime));
  info.driver = std::to_string(driver / 1000) + "." + std::to_string((driver % 1000) / 10);
  info.runtime = std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10);
  info.cublas = std::to_string(cublasLtGetVersion());
  int nccl = 0;
  CS_NCCL(ncclGetVersion(&nccl));
  info.nccl = std::to_string(nccl);
  return info;
}

} // namespace cs::cuda
