// GPU-cluster job traces (Microsoft Philly, Alibaba OpenB, the Tiresias simulator's format) read into jobs: arrival,
// GPUs, GPU share and duration. Rows a cluster cannot run are skipped and counted; malformed rows are refused.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace cs {

/** Rows a GPU job trace may hold (read whole: 1,000,000 Philly rows take 0.29 GB). */
inline constexpr std::size_t kMaxGpuTraceJobs = 2'000'000;

/** One job as a GPU-cluster trace records it. */
struct GpuTraceJob {
  std::string id;
  double submit_s = 0;   // seconds, as recorded (the workload shifts the first to 0)
  int gpus = 1;          // GPUs it gangs (all at once)
  int gpu_milli = 1000;  // share of each GPU it takes, in thousandths (OpenB's GPU sharing; 1000 = whole)
  double duration_s = 0; // run time on its recorded placement
  std::string group;     // virtual cluster (Philly), QoS class (OpenB) or model name (Tiresias)
  int line = 0;
};

struct GpuTraceSummary {
  std::string file;
  std::string format;
  long jobs = 0;
  long skipped = 0;
  std::map<std::string, long> skip_reasons; // sorted: deterministic output
  std::vector<std::string> unread_columns;  // header columns the format does not read, in header-name order
};

/** Reads `path` (plain or gzip-compressed CSV) in `format` ("auto" detects it). A malformed value throws InputError
 *  at its row and column; rows that are well formed but hold no runnable job (a pod that never ran, one using no
 *  GPU) are skipped and counted. */
std::vector<GpuTraceJob> read_gpu_trace(const std::string& format, const std::string& path, GpuTraceSummary& summary);

/** "file (format): N jobs, M skipped (reason: k, ...)". */
std::string describe(const GpuTraceSummary& s);

} // namespace cs
