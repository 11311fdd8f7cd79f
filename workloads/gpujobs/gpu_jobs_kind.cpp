// Workload kind `gpu-jobs`: a GPU-cluster job trace replayed under a queue policy and a gang placement policy, each
// job's run time scaled by its placement's iteration time (kernel costs and the collective tuner).
#include "base/statistics.hpp"
#include "base/units.hpp"
#include "core/workload.hpp"
#include "models/collectives/collective_model.hpp"
#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "models/transformer/step_compute.hpp"
#include "workloads/gpujobs/gpu_jobs_metrics.hpp"
#include "workloads/gpujobs/gpu_jobs_params.hpp"
#include "workloads/gpujobs/gpu_jobs_sim.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace cs {
namespace {

/** The jobs of the window, submissions from 0 and scaled. */
std::vector<GpuTraceJob> window(std::vector<GpuTraceJob> jobs, const GpuJobsParams& p)
{
  if (jobs.empty())
    return jobs;
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.submit_s < b.submit_s; });
  const double first = jobs.front().submit_s + p.start.value;
  std::vector<GpuTraceJob> out;
  for (auto& j : jobs) {
    if (j.submit_s < first || (p.duration.value > 0 && j.submit_s >= first + p.duration.value))
      continue;
    if ((p.limit > 0 && static_cast<long long>(out.size()) >= p.limit) || out.size() > kMaxReplayedGpuJobs)
      break; // (one past the bound is enough to refuse)
    j.submit_s = (j.submit_s - first) * p.arrival_scale;
    out.push_back(std::move(j));
  }
  return out;
}

// The iteration time of a data-parallel job on `gpus`: its compute, and the part of the gradient all-reduce that
// the backward pass does not hide.
class PlacementPricer {
public:
  PlacementPricer(const GpuJobsParams& p, const RunEnv& env) : p_(p), platform_(*env.platform)
  {
    const DeviceProfile profile =
        env.cluster->profile.empty() ? *builtin_profile(env.device->name) : load_profile(env.cluster->profile);
    const StepCompute step = step_of(*env.device, profile);
    compute_ = recorded_compute_ = step.iteration_s({1.0});
    bytes_ = step.stages.front().sync_bytes;
    if (!p.recorded_device.empty() && p.recorded_device != env.device->name) {
      const DeviceSpec& recorded = *DeviceCatalog::builtin().find(p.recorded_device);
      recorded_compute_ = step_of(recorded, *builtin_profile(recorded.name)).iteration_s({1.0});
    }
  }

  StepCompute step_of(const DeviceSpec& device, const DeviceProfile& profile) const
  {
    auto cost = make_cost_model(device, profile);
    return step_compute(p_.model, p_.framework, StepShape{p_.micro_batch, p_.micro_batch, ParallelLayout{}}, *cost);
  }

  /** A step on `gpus` with `compute` seconds of compute per step. */
  double iteration(const std::vector<int>& gpus, double compute) const
  {
    if (gpus.size() < 2)
      return compute;
    std::vector<int> hosts = gpus;
    std::sort(hosts.begin(), hosts.end());
    const double ar = choose_collective("all-reduce", "auto", bytes_, group_shape(platform_, hosts)).seconds;
    return compute + std::max(0.0, ar - p_.overlap * compute);
  }

  /** This placement on this GPU over the gang consolidated on the recorded GPU (cached by GPUs, nodes and racks
   *  spanned: what the collective's shape sees). */
  double slowdown(const std::vector<int>& gpus, int gpus_per_node)
  {
    std::set<int> nodes, racks;
    const Topology& t = platform_.topology;
    for (int g : gpus) {
      nodes.insert(g / gpus_per_node);
      racks.insert(t.vertex(t.hosts()[g]).groups.at(1));
    }
    const auto key = std::make_tuple(gpus.size(), nodes.size(), racks.size());
    auto it = cache_.find(key);
    if (it != cache_.end())
      return it->second;
    std::vector<int> packed(gpus.size());
    for (std::size_t i = 0; i < gpus.size(); ++i)
      packed[i] = static_cast<int>(i);
    const double ratio = iteration(gpus, compute_) / iteration(packed, recorded_compute_);
    cache_.emplace(key, ratio);
    return ratio;
  }

private:
  const GpuJobsParams& p_;
  const PlatformSpec& platform_;
  double compute_ = 0, recorded_compute_ = 0, bytes_ = 0;
  std::map<std::tuple<std::size_t, std::size_t, std::size_t>, double> cache_;
};

RunMetrics gpu_jobs_metrics(const GpuJobsOutcome& o, int total_gpus)
{
  RunMetrics m;
  std::vector<double> wait, jct, slow;
  double multi = 0, spanning = 0, unscheduled = 0;
  for (const auto& j : o.jobs) {
    if (j.start < 0) {
      ++unscheduled;
      continue;
    }
    wait.push_back(j.start - j.submit);
    jct.push_back(j.end - j.submit);
    if (j.gpus > 1) {
      ++multi;
      spanning += j.nodes > 1;
      slow.push_back(j.slowdown);
    }
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v)
      s += x;
    return v.empty() ? 0 : s / double(v.size());
  };
  const double capacity = std::max(1e-300, double(total_gpus) * o.makespan);
  m.set(metric::jobs, double(jct.size()));
  m.set(metric::mean_queueing_delay_s, mean(wait));
  m.set(metric::p95_queueing_delay_s, percentile(wait, 0.95));
  m.set(metric::mean_jct_s, mean(jct));
  m.set(metric::p95_jct_s, percentile(jct, 0.95));
  m.set(metric::makespan_s, o.makespan);
  m.set(metric::gpu_utilization, o.gpu_seconds_busy / capacity);
  m.set(metric::fragmentation, o.fragmented_gpu_seconds / capacity);
  m.set(metric::mean_placement_slowdown, slow.empty() ? 1.0 : mean(slow));
  m.set(metric::multi_node_share, multi > 0 ? spanning / multi : 0);
  m.breakdown = {{"jobs_never_fit", double(o.never_fit)},
                 {"jobs_unscheduled", unscheduled},
                 {"scheduling_events", double(o.events)}};
  return m;
}

std::string jobs_csv(const std::vector<GpuTraceJob>& jobs, const GpuJobsOutcome& o)
{
  std::string csv = "job,submit_s,start_s,end_s,gpus,gpu_milli,nodes,racks,slowdown\n";
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& r = o.jobs[i];
    csv += fmt::format("{},{:.3f},{:.3f},{:.3f},{},{},{},{},{:.6f}\n", jobs[i].id, r.submit, r.start, r.end, r.gpus,
                       r.gpu_milli, r.nodes, r.racks, r.slowdown);
  }
  return csv;
}

class GpuJobsKind : public Workload {
public:
  void configure(ObjectReader& r) override { read_gpu_jobs(r, params_); }

  void check(const WorkloadEnv& env) const override
  {
    if (env.cluster->is_cpu_cluster())
      throw env.error_at("workload.kind", "gpu-jobs needs a GPU cluster (nodes of GPUs), not racks");
    if (env.device->peak(params_.model.dtype) <= 0)
      throw env.error_at("workload.model.dtype",
                         fmt::format("{} has no {} compute units", env.cluster->device, params_.model.dtype));
    if (!params_.recorded_device.empty()) {
      const DeviceSpec* d = DeviceCatalog::builtin().find(params_.recorded_device);
      if (!d || d->kind != "gpu" || !builtin_profile(d->name) || d->peak(params_.model.dtype) <= 0)
        throw env.error_at("workload.recorded_device", "'" + params_.recorded_device +
                                                           "' is not a catalog GPU with a profile and " +
                                                           params_.model.dtype + " units");
    }
    if (!std::filesystem::is_regular_file(env.source->resolve(params_.trace)))
      throw env.error_at("workload.trace.file", "trace file not found: " + env.source->resolve(params_.trace));
  }

  WorkloadOutput run(const RunEnv& env) const override
  {
    GpuTraceSummary summary;
    const std::vector<GpuTraceJob> jobs =
        window(read_gpu_trace(params_.format, env.source->resolve(params_.trace), summary), params_);
    if (jobs.empty())
      throw env.error_at("workload.trace.start", "no job of the trace falls in the window");
    if (jobs.size() > kMaxReplayedGpuJobs) // bounded before simulating (the queue's work grows faster than the jobs)
      throw env.error_at("workload.trace",
                         fmt::format("the window holds more than {} jobs, the most one run replays (200,000 Philly "
                                     "jobs on 256 GPUs take about 11 s): set trace.limit or trace.duration",
                                     kMaxReplayedGpuJobs));
    auto scheduler = env.policies->make<JobScheduler>("cluster", *env.source);
    auto placement = env.policies->make<GangPlacement>("placement", *env.source);
    PlacementPricer pricer(params_, env);
    const int per_node = env.cluster->gpus_per_node;
    const bool scaled = params_.placement_slowdown || !params_.recorded_device.empty();
    const PlacementSlowdown slowdown = [&](const std::vector<int>& gpus) {
      return scaled ? pricer.slowdown(gpus, per_node) : 1.0;
    };
    const GpuJobsOutcome o = simulate_gpu_jobs(jobs, *env.platform, per_node, *scheduler, *placement, slowdown);
    WorkloadOutput out;
    out.metrics = gpu_jobs_metrics(o, env.cluster->gpus);
    out.metrics.breakdown["trace_jobs_read"] = double(summary.jobs);
    out.metrics.breakdown["trace_rows_skipped"] = double(summary.skipped);
    const RunMetrics& M = out.metrics;
    out.summary = fmt::format("  trace     {}\n", describe(summary));
    out.summary += fmt::format("  jobs      {} on {} GPUs, queue {}, placement {}\n", M.at(metric::jobs),
                               env.cluster->gpus, env.policies->name("cluster"), env.policies->name("placement"));
    out.summary += fmt::format(
        "  wait      mean {}  p95 {};  JCT mean {}  p95 {};  makespan {}\n",
        units::format_time(M.at(metric::mean_queueing_delay_s)), units::format_time(M.at(metric::p95_queueing_delay_s)),
        units::format_time(M.at(metric::mean_jct_s)), units::format_time(M.at(metric::p95_jct_s)),
        units::format_time(M.at(metric::makespan_s)));
    out.summary += fmt::format("  GPUs      {:.1f}% busy, {:.1f}% free but fragmented; multi-GPU jobs {:.1f}% across "
                               "nodes, {:.3f}x slower than consolidated\n",
                               100 * M.at(metric::gpu_utilization), 100 * M.at(metric::fragmentation),
                               100 * M.at(metric::multi_node_share), M.at(metric::mean_placement_slowdown));
    out.files.emplace_back("jobs.csv", jobs_csv(jobs, o));
    out.wall_note = fmt::format(" ({} scheduling events)", o.events);
    if (o.never_fit > 0)
      out.warnings.push_back(fmt::format("{} jobs need more GPUs than the cluster has and were left out", o.never_fit));
    return out;
  }

  std::unique_ptr<Workload> clone() const override { return std::make_unique<GpuJobsKind>(*this); }

private:
  GpuJobsParams params_;
};

} // namespace

CS_REGISTER_WORKLOAD(GpuJobsKind, "gpu-jobs",
                     "a GPU-cluster job trace (Philly, Alibaba OpenB) under a queue and a gang placement policy");

} // namespace cs
