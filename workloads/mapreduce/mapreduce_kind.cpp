// Workload kind `mapreduce`: jobs from a trace or a generator on a CPU cluster, run as actors under a scheduler.
#include "base/units.hpp"
#include "core/actor_runtime.hpp"
#include "core/chrome_trace.hpp"
#include "core/workload.hpp"
#include "models/dataflow/actor_backend.hpp"
#include "policies/mapreduce/task_scheduler.hpp"
#include "workloads/mapreduce/mapreduce_metrics.hpp"
#include "workloads/mapreduce/mapreduce_params.hpp"
#include "workloads/mapreduce/mapreduce_sim.hpp"
#include "workloads/mapreduce/mapreduce_workload.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace cs {
namespace {

/** Chrome trace of a MapReduce run: one process per host, one thread for maps and one for reducers. */
std::string mapreduce_trace_json(const MapReduceOutcome& o, const MapReduceWorkload& w, const PlatformSpec& platform)
{
  ChromeTrace trace;
  for (int h = 0; h < platform.topology.host_count(); ++h)
    trace.process(h, platform.topology.vertex(platform.topology.hosts()[h]).name);
  for (const auto& t : o.tasks) {
    const auto& job = w.jobs[t.job];
    const std::string name =
        job.id + (t.map ? "/m" : "/r") + std::to_string(t.index) + (t.speculative ? " (speculative)" : "");
    trace.complete(name, t.map ? "map" : "reduce", t.host, t.map ? 0 : 1, t.start, t.end,
                   {{"locality", t.locality}, {"killed", t.killed}, {"failed", t.failed}});
  }
  return trace.dump();
}

std::string jobs_csv(const MapReduceWorkload& workload, const MapReduceOutcome& outcome)
{
  std::string csv = "job,submit_s,finish_s,jct_s,maps,reduces,input_bytes,shuffle_bytes,output_bytes,failed\n";
  for (std::size_t j = 0; j < workload.jobs.size(); ++j) {
    const auto& job = workload.jobs[j];
    const auto& rec = outcome.jobs[j];
    csv += fmt::format("{},{:.6f},{:.6f},{:.6f},{},{},{:.0f},{:.0f},{:.0f},{}\n", job.id, rec.submit, rec.finish,
                       rec.finish - rec.submit, rec.maps, rec.reduces, job.input_bytes, job.shuffle_bytes,
                       job.output_bytes, rec.failed ? 1 : 0);
  }
  return csv;
}

std::string summary_lines(const RunEnv& env, const MapReduceParams& p, const MapReduceWorkload& workload,
                          const MapReduceOutcome& outcome, const std::string& policy, const RunMetrics& metrics)
{
  const ClusterParams& cluster = *env.cluster;
  std::string out = fmt::format("  cluster   {} racks x {} hosts, {} containers each, tree network\n", cluster.racks,
                                cluster.hosts_per_rack, outcome.containers / (cluster.racks * cluster.hosts_per_rack));
  if (workload.trace) {
    out += "  trace     " + describe(*workload.trace) + "\n";
    for (std::size_t i = 0; i < workload.trace->problems.size() && i < 3; ++i)
      out += "            " + workload.trace->problems[i] + "\n";
    if (workload.trace->skipped > 3)
      out += fmt::format("            ... (clustersim trace FILE --format {} lists the first {})\n", p.trace.format,
                         TraceSummary::kMaxProblems);
  }
  out += fmt::format("  workload  {} jobs, scheduler {}\n", workload.jobs.size(), policy);
  out += fmt::format(
      "  jobs      mean JCT {}  p50 {}  p95 {}  makespan {}\n", units::format_time(metrics.at(metric::mean_jct_s)),
      units::format_time(metrics.at(metric::p50_jct_s)), units::format_time(metrics.at(metric::p95_jct_s)),
      units::format_time(metrics.at(metric::makespan_s)));
  if (const double failed = metrics.breakdown.at("failed_jobs"), redone = metrics.breakdown.at("failed_attempts");
      failed > 0 || redone > 0)
    out += fmt::format("  failures  {:.0f} job(s) failed (a task's last attempt failed); {:.0f} failed attempts redone "
                       "as recorded\n",
                       failed, redone);
  out += fmt::format("  locality  maps node {:.1f}%  rack {:.1f}%  off-rack {:.1f}%;  containers busy {:.1f}%\n",
                     100 * metrics.at(metric::map_locality_node), 100 * metrics.at(metric::map_locality_rack),
                     100 * metrics.at(metric::map_locality_off_rack), 100 * metrics.at(metric::utilization));
  out += fmt::format(
      "  traffic   {} over the network (rack {}, pod {}, core {}); traffic cost {:.4g}; mean shuffle "
      "flow {}\n",
      units::format_bytes(metrics.at(metric::network_bytes)), units::format_bytes(metrics.at(metric::bytes_rack)),
      units::format_bytes(metrics.at(metric::bytes_pod)), units::format_bytes(metrics.at(metric::bytes_core)),
      metrics.at(metric::traffic_cost), units::format_time(metrics.at(metric::mean_shuffle_flow_s)));
  return out;
}

class MapReduceKind : public Workload {
public:
  void configure(ObjectReader& r) override
  {
    read_mapreduce(r.child("mapreduce", "workload.kind mapreduce: jobs, HDFS, YARN and shuffle settings"), params_,
                   !r.describing());
  }

  void check(const WorkloadEnv& env) const override
  {
    const ClusterParams& cluster = *env.cluster;
    const auto& m = params_;
    if (!cluster.is_cpu_cluster())
      throw env.error_at("workload.kind", "mapreduce runs on a CPU cluster: give cluster.racks and hosts_per_rack");
    check_actor_backend(env, "mapreduce");
    PlatformSpec platform = build_platform_spec(cluster, *env.device);
    const int containers = m.containers_per_host > 0 ? m.containers_per_host : platform.host.cores;
    if (containers < 1)
      throw env.error_at("workload.mapreduce.containers_per_host", "a host must hold at least one container");
    if (static_cast<long long>(containers) * platform.topology.host_count() > 1048576)
      throw env.error_at("workload.mapreduce.containers_per_host",
                         fmt::format("{} containers on each of {} hosts: at most 1,048,576 containers in all",
                                     containers, platform.topology.host_count()));
    if (platform.host.disk_bandwidth <= 0)
      throw env.error_at("cluster.host.disk_bandwidth", "mapreduce needs hosts with disks (disk_bandwidth > 0)");
    for (std::size_t i = 0; i < m.middleboxes.size(); ++i) {
      int v = platform.topology.find_vertex(m.middleboxes[i]);
      if (v < 0 || platform.topology.vertex(v).is_host)
        throw env.error_at("workload.mapreduce.middleboxes",
                           fmt::format("middlebox '{}' is not a switch of this cluster (switches are named like agg0, "
                                       "core, rack0/tor)",
                                       m.middleboxes[i]));
    }
    if (m.replication > cluster.racks * cluster.hosts_per_rack)
      throw env.error_at("workload.mapreduce.replication",
                         fmt::format("{} replicas need at least that many hosts (the cluster has {})", m.replication,
                                     cluster.racks * cluster.hosts_per_rack));
    if (!m.trace.file.empty() && !std::filesystem::is_regular_file(env.source->resolve(m.trace.file)))
      throw env.error_at("workload.mapreduce.trace.file", "trace file not found: " + env.source->resolve(m.trace.file));
  }

  WorkloadOutput run(const RunEnv& env) const override
  {
    const auto& p = params_;
    const PlatformSpec& platform = *env.platform;
    TopologyCost cost(platform.topology, p.level_costs, p.middleboxes);
    MapReduceWorkload workload;
    try {
      workload =
          build_mapreduce_workload(p, cost.layout(), env.source->base_dir(), static_cast<std::uint64_t>(env.seed));
    } catch (const TaskBoundError& e) {
      throw env.error_at("workload.mapreduce.block_size", e.what());
    } catch (const std::invalid_argument& e) { // nothing to replay: bad input, not a failed run
      throw env.error_at(p.trace.file.empty() ? "workload.mapreduce.synthetic" : "workload.mapreduce.trace.start",
                         e.what());
    }
    if (env.backend == Backend::SIMGRID)
      if (const std::string w = simgrid_duration_warning(workload); !w.empty())
        env.heads_up(w);
    const std::string policy = env.policies->name("mapreduce");
    auto scheduler = env.policies->make<MapReduceScheduler>("mapreduce", *env.source);
    auto runtime = env.actors();
    // cluster.stragglers: on a CPU cluster a device is a host (and so is a node).
    const int hosts = platform.topology.host_count();
    const StragglerModel stragglers(env.cluster->stragglers, hosts, 1, static_cast<std::uint64_t>(env.seed));
    MapReduceOutcome outcome =
        simulate_mapreduce(*runtime, workload.jobs, platform, p, *scheduler, cost, static_cast<std::uint64_t>(env.seed),
                           stragglers.any() ? &stragglers : nullptr);
    WorkloadOutput out;
    out.metrics = mapreduce_metrics(outcome, cost);
    if (workload.trace) {
      out.metrics.breakdown["trace_jobs_read"] = static_cast<double>(workload.trace->jobs_read);
      out.metrics.breakdown["trace_rows_skipped"] = static_cast<double>(workload.trace->skipped);
      out.metrics.breakdown["trace_jobs_outside_window"] = static_cast<double>(workload.outside_window);
    }
    if (env.trace)
      out.trace_json = mapreduce_trace_json(outcome, workload, platform);
    out.files.emplace_back("jobs.csv", jobs_csv(workload, outcome));
    out.summary = summary_lines(env, p, workload, outcome, policy, out.metrics);
    out.wall_note = fmt::format(" ({} activities, {} scheduling rounds)", outcome.activities, outcome.rounds);
    return out;
  }

  std::unique_ptr<Workload> clone() const override { return std::make_unique<MapReduceKind>(*this); }

private:
  MapReduceParams params_;
};

} // namespace

CS_REGISTER_WORKLOAD(MapReduceKind, "mapreduce", "jobs on a CPU cluster");

} // namespace cs
