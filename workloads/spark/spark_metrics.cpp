#include "workloads/spark/spark_metrics.hpp"

#include "base/statistics.hpp"
#include "core/chrome_trace.hpp"

#include <fmt/format.h>

namespace cs {

RunMetrics spark_metrics(const SparkOutcome& o)
{
  RunMetrics r;
  auto& B = r.breakdown;
  std::vector<double> jct;
  double busy = 0, allocated = 0, jct_sum = 0;
  int added = 0, removed = 0;
  for (const auto& a : o.apps) {
    jct.push_back(a.finish - a.submit);
    jct_sum += a.finish - a.submit;
    busy += a.busy_core_s;
    allocated += a.allocated_core_s;
    added += a.executors_added;
    removed += a.executors_removed;
  }
  r.set(metric::applications, static_cast<double>(o.apps.size()));
  r.set(metric::mean_jct_s, jct.empty() ? 0 : jct_sum / jct.size());
  r.set(metric::p50_jct_s, percentile(jct, 0.5));
  r.set(metric::p95_jct_s, percentile(jct, 0.95));
  r.set(metric::makespan_s, o.makespan);
  const double capacity = o.cluster_cores * o.makespan;
  r.set(metric::cluster_utilization, capacity > 0 ? busy / capacity : 0);
  r.set(metric::executor_utilization, allocated > 0 ? busy / allocated : 0);
  r.set(metric::allocated_share, capacity > 0 ? allocated / capacity : 0);
  r.set(metric::executors_added, added);
  r.set(metric::executors_removed, removed);
  const auto& c = o.cache;
  r.set(metric::cache_reads, static_cast<double>(c.reads));
  r.set(metric::cache_hit_rate, c.reads > 0 ? static_cast<double>(c.memory_hits) / c.reads : 0);
  r.set(metric::cache_disk_hit_rate, c.reads > 0 ? static_cast<double>(c.disk_hits) / c.reads : 0);
  r.set(metric::bytes_recomputed, c.bytes_recomputed);
  r.set(metric::bytes_fetched_remote, c.bytes_fetched_remote);
  r.set(metric::bytes_migrated, c.bytes_migrated);
  r.set(metric::cache_evictions, static_cast<double>(c.evictions));
  r.set(metric::blocks_lost, static_cast<double>(c.blocks_lost));
  const auto succeeded = static_cast<double>(o.tasks.size() - static_cast<std::size_t>(o.failed_attempts));
  r.set(metric::tasks, succeeded);
  r.set(metric::failed_task_attempts, static_cast<double>(o.failed_attempts));
  r.set(metric::failed_jobs, o.failed_jobs);
  r.set(metric::stages, static_cast<double>(o.stages.size()));
  double local[3] = {0, 0, 0};
  for (const auto& t : o.tasks)
    local[t.locality] += !t.failed;
  const double n = std::max(1.0, succeeded);
  r.set(metric::locality_process, local[0] / n);
  r.set(metric::locality_node, local[1] / n);
  r.set(metric::locality_any, local[2] / n);
  B["cache_local_hits"] = static_cast<double>(c.local_hits);
  B["cache_host_hits"] = static_cast<double>(c.host_hits);
  B["cache_remote_hits"] = static_cast<double>(c.remote_hits);
  B["cache_recomputed_reads"] = static_cast<double>(c.recomputed);
  B["task_core_s"] = busy;
  B["executor_core_s"] = allocated;
  return r;
}

std::string spark_apps_csv(const std::vector<SparkApplication>& apps, const SparkOutcome& o)
{
  std::string csv = "application,submit_s,first_executor_s,finish_s,jct_s,executors_added,executors_removed,"
                    "peak_executors,task_core_s,executor_core_s\n";
  for (std::size_t a = 0; a < apps.size(); ++a) {
    const auto& r = o.apps[a];
    csv += fmt::format("{},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{:.3f},{:.3f}\n", apps[a].name, r.submit,
                       r.first_executor, r.finish, r.finish - r.submit, r.executors_added, r.executors_removed,
                       r.peak_executors, r.busy_core_s, r.allocated_core_s);
  }
  return csv;
}

std::string spark_stages_csv(const std::vector<SparkApplication>& apps, const SparkOutcome& o)
{
  std::string csv = "application,stage,rdd,tasks,start_s,end_s,duration_s,aborted\n";
  for (const auto& s : o.stages)
    csv += fmt::format("{},{},{},{},{:.6f},{:.6f},{:.6f},{}\n", apps[s.app].name, s.stage,
                       apps[s.app].rdds[apps[s.app].stages[s.stage].rdd].name, s.tasks, s.start, s.end, s.end - s.start,
                       s.aborted ? "yes" : "no");
  return csv;
}

std::string spark_cores_csv(const SparkOutcome& o)
{
  std::string csv = "time_s,busy_cores,allocated_cores,cluster_cores\n";
  for (const auto& s : o.cores)
    csv += fmt::format("{:.6f},{},{},{}\n", s.t, s.busy, s.allocated, o.cluster_cores);
  return csv;
}

std::string spark_trace_json(const std::vector<SparkApplication>& apps, const SparkOutcome& o,
                             const std::vector<std::string>& host_names)
{
  ChromeTrace trace;
  for (std::size_t h = 0; h < host_names.size(); ++h)
    trace.process(static_cast<int>(h), host_names[h]);
  for (const auto& t : o.tasks)
    trace.complete(fmt::format("{}/s{}/p{}{}", apps[t.app].name, t.stage, t.partition, t.failed ? " (failed)" : ""),
                   "task", t.host, t.executor, t.start, t.end, {{"locality", t.locality}});
  return trace.dump();
}

} // namespace cs
