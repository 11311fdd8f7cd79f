// PyTorch profiler (Kineto) traces read into what a replay needs: GPU operations with their streams and measured
// durations, the CUDA runtime calls that launched them, NCCL collectives' sizes and groups, and the profiler steps.
#pragma once

#include <string>
#include <vector>

namespace cs {

/** A GPU operation: a kernel, a memcpy or a memset, on `stream` of `device`. Times in seconds. */
struct KinetoOp {
  enum Kind { KERNEL, MEMCPY, MEMSET };
  Kind kind = KERNEL;
  std::string name;
  double ts = 0, dur = 0;
  int device = 0;
  long long stream = 0;
  long long correlation = -1; // the runtime call that launched it (-1 = unknown)
  // NCCL kernels (from the profiler's args): the collective, its elements, element type and group size.
  std::string collective;
  double elements = 0;
  std::string dtype;
  int group_size = 0;
};

/** A CUDA runtime call on a CPU thread (launches, event records and waits, synchronisations). */
struct KinetoCall {
  std::string name;
  double ts = 0, dur = 0;
  long long thread = 0;
  long long correlation = -1;
};

/** A profiler step (ProfilerStep#N), as the CPU annotated it. */
struct KinetoStep {
  std::string name;
  double ts = 0, dur = 0;
};

/** A stream's wait on an event, as the profiler recorded it on the GPU (category cuda_sync, "Stream Wait Event"; only
 *  in traces taken with enable_cuda_sync_events): `stream` waits for what `wait_on_stream` held when the
 *  cudaEventRecord with correlation `record_correlation` ran. `correlation` is the cudaStreamWaitEvent call's. */
struct KinetoStreamWait {
  long long correlation = -1;
  long long stream = -1, wait_on_stream = -1;
  long long record_correlation = -1;
};

struct KinetoTrace {
  std::string file;
  std::string device_name; // deviceProperties[0].name, "" when absent
  int rank = 0, world_size = 1;
  std::vector<KinetoOp> ops;     // by start time
  std::vector<KinetoCall> calls; // by start time
  std::vector<KinetoStep> steps; // by start time
  std::vector<KinetoStreamWait> waits;
};

/** Reads a Kineto trace (`.json`, or gzip-compressed `.json.gz`, at most 1 GiB uncompressed). Syntax errors are
 *  InputError at their line and column; a document without `traceEvents`, or events of the wrong shape, at the
 *  JSON path (e.g. `traceEvents[12].dur`). */
KinetoTrace read_kineto(const std::string& path);

} // namespace cs
