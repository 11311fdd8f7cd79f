#include "workloads/mapreduce/mapreduce_workload.hpp"

#include "models/dataflow/hdfs_placement.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <stdexcept>

namespace cs {

double map_count(const TraceJob& t, const MapReduceParams& p)
{
  if (!t.map_input_bytes.empty())
    return static_cast<double>(t.map_input_bytes.size());
  if (t.maps > 0)
    return t.maps;
  return std::max(1.0, std::ceil(t.input_bytes * p.trace.scale / p.block_size.value));
}

std::string simgrid_duration_warning(const MapReduceWorkload& workload)
{
  double tasks = 0, flows = 0;
  for (const auto& job : workload.jobs) {
    tasks += static_cast<double>(job.maps.size()) + job.reduces;
    flows += static_cast<double>(job.maps.size()) * job.reduces;
  }
  if (flows + tasks <= 200000)
    return "";
  return fmt::format("{:.0f} map and reduce tasks and {:.0f} shuffle flows on the simgrid backend: expect minutes (an "
                     "hour of SWIM FB-2010 at scale 0.2 on 600 hosts, 5.8 million flows, takes 525-660 s there and "
                     "25 s with --backend analytical)",
                     tasks, flows);
}

MapReduceJob job_from_trace(const TraceJob& t, const MapReduceParams& p)
{
  MapReduceJob job;
  job.id = t.id;
  job.name = t.name;
  job.submit_s = t.submit_s;
  const bool recorded = p.recorded_overheads;
  job.startup_s = recorded && t.startup_s >= 0 ? t.startup_s : p.am_startup.value;
  job.commit_s = recorded && t.commit_s >= 0 ? t.commit_s : p.job_commit.value;
  const double scale = p.trace.scale;
  if (!t.map_input_bytes.empty()) {
    for (std::size_t m = 0; m < t.map_input_bytes.size(); ++m) {
      MapTaskSpec spec;
      spec.input_bytes = t.map_input_bytes[m] * scale;
      double recorded = m < t.map_seconds.size() ? t.map_seconds[m] : -1;
      spec.compute_s = recorded >= 0 ? recorded : spec.input_bytes / p.map_rate.value;
      if (m < t.map_failed_attempts.size()) {
        for (const auto& a : t.map_failed_attempts[m]) {
          spec.failed_attempts_s.push_back(a.run_s);
          spec.relaunch_s.push_back(recorded ? std::max(0.0, a.relaunch_s) : 0.0);
        }
        spec.gives_up = t.map_gave_up[m] != 0;
      }
      job.maps.push_back(spec);
    }
  } else {
    const double input = t.input_bytes * scale;
    const int maps = static_cast<int>(map_count(t, p));
    const double per_map = input / maps;
    for (int m = 0; m < maps; ++m)
      job.maps.push_back(MapTaskSpec{per_map, {}, per_map / p.map_rate.value, {}, {}, false});
  }
  for (const auto& m : job.maps)
    job.input_bytes += m.input_bytes;
  job.shuffle_bytes = t.shuffle_bytes * scale;
  job.output_bytes = t.output_bytes * scale;
  if (t.reduces >= 0)
    job.reduces = t.reduces;
  else if (job.shuffle_bytes > 0)
    job.reduces =
        std::clamp(static_cast<int>(std::ceil(job.shuffle_bytes / p.reduce_bytes_per_task.value)), 1, p.max_reduces);
  if (job.reduces == 0)
    job.shuffle_bytes = 0;
  for (int r = 0; r < job.reduces; ++r) {
    double recorded = r < static_cast<int>(t.reduce_seconds.size()) ? t.reduce_seconds[r] : -1;
    job.reduce_compute_s.push_back(recorded >= 0 ? recorded : job.shuffle_bytes / job.reduces / p.reduce_rate.value);
    const bool known = r < static_cast<int>(t.reduce_failed_attempts.size());
    job.reduce_failed_attempts_s.emplace_back();
    if (known)
      for (const auto& a : t.reduce_failed_attempts[r])
        job.reduce_failed_attempts_s.back().push_back(a.run_s + (recorded ? std::max(0.0, a.relaunch_s) : 0.0));
    job.reduce_gives_up.push_back(known && t.reduce_gave_up[r] != 0);
  }
  return job;
}

namespace {

/** Replicas of every block of every dataset, placed once: jobs reading the same input path read the same blocks. */
class Datasets {
public:
  Datasets(const MapReduceParams& p, const ClusterLayout& layout, std::uint64_t seed)
      : p_(p), layout_(layout), rng_(seed ^ 0x9e3779b97f4a7c15ULL)
  {}

  const std::vector<int>& block(const std::string& dataset, int index)
  {
    auto& d = datasets_[dataset];
    if (d.writers.empty() && p_.writer_racks > 0) {
      // The dataset was written by tasks on the hosts of `writer_racks` random racks.
      std::vector<int> racks(layout_.racks());
      for (int r = 0; r < layout_.racks(); ++r)
        racks[r] = r;
      std::shuffle(racks.begin(), racks.end(), rng_);
      for (int k = 0; k < std::min(p_.writer_racks, layout_.racks()); ++k)
        for (int h : layout_.hosts_in_rack[racks[k]])
          d.writers.push_back(h);
    }
    while (static_cast<int>(d.blocks.size()) <= index) {
      int writer = d.writers.empty() ? -1 : d.writers[d.blocks.size() % d.writers.size()];
      d.blocks.push_back(place_block(layout_, writer, p_.replication, rng_));
    }
    return d.blocks[index];
  }

  /** A trace's host name as a host of this cluster: names in first-seen order, dealt round the hosts. */
  int host_named(const std::string& name)
  {
    auto [it, fresh] = host_names_.emplace(name, static_cast<int>(host_names_.size()) % layout_.hosts());
    return it->second;
  }

private:
  struct Dataset {
    std::vector<int> writers;
    std::vector<std::vector<int>> blocks;
  };
  const MapReduceParams& p_;
  const ClusterLayout& layout_;
  std::mt19937_64 rng_;
  std::map<std::string, Dataset> datasets_;
  std::map<std::string, int> host_names_;
};

std::vector<TraceJob> synthetic_jobs(const SyntheticJobsParams& g, std::mt19937_64& rng)
{
  std::vector<TraceJob> out;
  std::exponential_distribution<double> gap(1.0 / g.mean_interarrival.value);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double t = 0;
  const double lo = std::log(g.min_input.value), hi = std::log(g.max_input.value);
  for (int j = 0; j < g.jobs; ++j) {
    TraceJob job;
    job.id = "job" + std::to_string(j);
    job.name = job.id;
    job.submit_s = t;
    job.input_bytes = std::exp(lo + (hi - lo) * u(rng));
    job.shuffle_bytes = job.input_bytes * g.shuffle_ratio;
    job.output_bytes = (g.shuffle_ratio > 0 ? job.shuffle_bytes : job.input_bytes) * g.output_ratio;
    out.push_back(std::move(job));
    t += gap(rng);
  }
  return out;
}

} // namespace

MapReduceWorkload build_mapreduce_workload(const MapReduceParams& p, const ClusterLayout& layout,
                                           const std::string& base_dir, std::uint64_t seed)
{
  MapReduceWorkload w;
  std::mt19937_64 rng(seed);
  std::vector<TraceJob> source;
  if (p.synthetic.jobs > 0) {
    source = synthetic_jobs(p.synthetic, rng);
  } else {
    auto path = std::filesystem::path(p.trace.file);
    if (path.is_relative())
      path = std::filesystem::path(base_dir) / path;
    std::vector<TraceJob> all;
    w.trace = read_trace(p.trace.format, path.string(), [&](TraceJob&& j) { all.push_back(std::move(j)); });
    std::stable_sort(all.begin(), all.end(),
                     [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
    const double origin = all.empty() ? 0 : all.front().submit_s;
    const double from = origin + p.trace.start.value;
    const double to = p.trace.duration.value > 0 ? from + p.trace.duration.value : INFINITY;
    for (auto& j : all) {
      if (j.submit_s < from || j.submit_s >= to ||
          (p.trace.max_jobs > 0 && static_cast<int>(source.size()) >= p.trace.max_jobs)) {
        ++w.outside_window;
        continue;
      }
      j.submit_s -= from;
      source.push_back(std::move(j));
    }
  }
  if (source.empty())
    throw std::invalid_argument("the workload has no jobs to run (check trace.start, trace.duration and the trace's "
                                "skipped rows)");
  // Counted before any job is built: one map per block of a 1e18-byte input would never finish building.
  double tasks = 0;
  for (std::size_t j = 0; j < source.size(); ++j) {
    const TraceJob& t = source[j];
    const double reduces = t.reduces >= 0 ? t.reduces
                                          : std::min<double>(p.max_reduces, std::ceil(t.shuffle_bytes * p.trace.scale /
                                                                                      p.reduce_bytes_per_task.value));
    tasks += map_count(t, p) + reduces;
    if (tasks > kMaxMapReduceTasks)
      throw TaskBoundError(
          fmt::format("the jobs up to job {} of {} already make {:.0f} map and reduce tasks, more "
                      "than the {} a run is bounded to: raise block_size, lower trace.scale or replay fewer jobs",
                      j + 1, source.size(), tasks, kMaxMapReduceTasks));
  }
  Datasets datasets(p, layout, seed);
  std::map<std::string, int> queue_index;
  for (std::size_t q = 0; q < p.queues.size(); ++q)
    queue_index.emplace(p.queues[q].name, static_cast<int>(q));
  for (std::size_t j = 0; j < source.size(); ++j) {
    const TraceJob& t = source[j];
    MapReduceJob job = job_from_trace(t, p);
    if (auto q = queue_index.find(t.queue); q != queue_index.end())
      job.queue = q->second;
    const std::string dataset = t.input_path.empty() ? "job:" + std::to_string(j) : t.input_path;
    for (std::size_t m = 0; m < job.maps.size(); ++m) {
      if (m < t.map_hosts.size() && !t.map_hosts[m].empty())
        for (const auto& name : t.map_hosts[m]) {
          int h = datasets.host_named(name);
          if (std::find(job.maps[m].replicas.begin(), job.maps[m].replicas.end(), h) == job.maps[m].replicas.end())
            job.maps[m].replicas.push_back(h);
        }
      else
        job.maps[m].replicas = datasets.block(dataset, static_cast<int>(m));
    }
    w.jobs.push_back(std::move(job));
  }
  return w;
}

} // namespace cs
