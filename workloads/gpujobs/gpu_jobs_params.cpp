#include "workloads/gpujobs/gpu_jobs_params.hpp"

#include "traces/trace_format.hpp"

namespace cs {

namespace {
std::vector<std::string> gpu_trace_choices()
{
  std::vector<std::string> out{"auto"};
  for (const auto& name : trace_format_names("gpu-jobs"))
    out.push_back(name);
  return out;
}
} // namespace

void read_gpu_jobs(ObjectReader& r, GpuJobsParams& p)
{
  ObjectReader t = r.child("trace", "the job trace");
  t.required("file", p.trace, "CSV of jobs (Philly, Alibaba OpenB or Tiresias format), relative to the scenario")
      .choice("format", p.format, gpu_trace_choices(), "the trace's format (auto: from its header)")
      .field("start", p.start, "replay from this long after the first submission")
      .field("duration", p.duration, "replay this window (0 = to the end)")
      .field("limit", p.limit, "at most this many jobs (0 = all)")
      .field("arrival_scale", p.arrival_scale, "multiplies submission times: 0.5 doubles the load");
  t.finish();
  t.require_non_negative("start", p.start.value);
  t.require_non_negative("duration", p.duration.value);
  t.require_non_negative("limit", static_cast<double>(p.limit));
  t.require_at_most("limit", static_cast<double>(p.limit), static_cast<double>(kMaxReplayedGpuJobs));
  t.require(p.arrival_scale > 0 && p.arrival_scale <= 1e6, "arrival_scale", "arrival_scale must be in (0, 1e6]");
  read_model(r.child("model", "what every job trains: its iteration time on a placement scales the job's run time"),
             p.model);
  read_framework(r, p.framework);
  r.field("micro_batch", p.micro_batch, "samples per GPU per step of every job")
      .field("placement_slowdown", p.placement_slowdown,
             "scale each job's recorded run time by its placement's iteration time over a consolidated one's")
      .field("overlap", p.overlap, "share of a step's compute the gradient all-reduce hides behind (bucketed DDP)")
      .field("recorded_device", p.recorded_device,
             "catalog GPU the trace's durations were measured on: run times scale by the model's step there over "
             "here (\"\" = the cluster's GPU, durations as recorded)");
  r.require_positive("micro_batch", p.micro_batch);
  r.require_at_most("micro_batch", p.micro_batch, 1 << 16);
  r.require(p.overlap >= 0 && p.overlap <= 1, "overlap", "overlap must be in [0, 1]");
}

} // namespace cs
