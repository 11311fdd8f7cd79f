// Timing GPU work with CUDA events: warm-up, then the median of repeats (and min, max for the spread).
#pragma once

#include "calibrate/kernels/cuda_check.cuh"

#include <algorithm>
#include <vector>

namespace cs::cuda {

struct Timed {
  double median = 0, min = 0, max = 0; // seconds
  int repeats = 0;
};

/** Runs `launch` (which enqueues work on `stream`) `warmup` times untimed, then `repeats` times, each between two
 *  events; a sample shorter than 1 ms is repeated inside the events so that event resolution stays small. */
template <class F> Timed time_on_stream(cudaStream_t stream, int warmup, int repeats, F&& launch)
{
  cudaEvent_t start, stop;
  CS_CUDA(cudaEventCreate(&start));
  CS_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i)
    launch();
  CS_CUDA(cudaEventRecord(start, stream));
  launch();
  CS_CUDA(cudaEventRecord(stop, stream));
  CS_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CS_CUDA(cudaEventElapsedTime(&ms, start, stop));
  const int inner = std::max(1, static_cast<int>(1.0 / std::max(ms, 1e-4f)));
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    CS_CUDA(cudaEventRecord(start, stream));
    for (int i = 0; i < inner; ++i)
      launch();
    CS_CUDA(cudaEventRecord(stop, stream));
    CS_CUDA(cudaEventSynchronize(stop));
    CS_CUDA(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms * 1e-3 / inner);
  }
  CS_CUDA(cudaGetLastError());
  CS_CUDA(cudaEventDestroy(start));
  CS_CUDA(cudaEventDestroy(stop));
  std::sort(samples.begin(), samples.end());
  return Timed{samples[samples.size() / 2], samples.front(), samples.back(), repeats};
}

} // namespace cs::cuda
