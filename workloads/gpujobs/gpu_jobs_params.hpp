// What a gpu-jobs workload reads from `workload:`: the job trace and its window, arrival scaling, and the model whose
// iteration time prices each placement.
#pragma once

#include "base/yaml_reader.hpp"
#include "models/transformer/framework.hpp"
#include "models/transformer/model_params.hpp"

#include <cstddef>
#include <string>

namespace cs {

/** Jobs one run replays (200,000 Philly jobs on 256 GPUs take about 11 s and 0.3 GB; a million did not end in
 *  300 s, the queue's work growing faster than the jobs). */
inline constexpr std::size_t kMaxReplayedGpuJobs = 200'000;

struct GpuJobsParams {
  std::string trace;              // CSV (path relative to the scenario)
  std::string format = "auto";    // philly | openb | tiresias | auto
  Seconds start{0};               // window start, after the first submission
  Seconds duration{0};            // window length (0 = to the end)
  long long limit = 0;            // at most this many jobs (0 = all)
  double arrival_scale = 1.0;     // multiplies every submission time: 0.5 doubles the load
  bool placement_slowdown = true; // a job's run time follows its placement's iteration time
  ModelParams model;              // what every job trains, for the placement's iteration time
  FrameworkProfile framework = builtin_frameworks().at(1);
  int micro_batch = 16;        // samples per GPU per step
  double overlap = 2.0 / 3.0;  // share of a step's compute the gradient all-reduce can hide behind
  std::string recorded_device; // the GPU the trace's durations were measured on ("" = the cluster's: no rescaling)
};

void read_gpu_jobs(ObjectReader& r, GpuJobsParams& p);

} // namespace cs
