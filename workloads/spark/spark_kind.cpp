// Workload kind `spark`: Spark applications (HiBench-like or replayed from event logs) on a CPU cluster, run as actors
// under a cache layout (policies.spark_cache) and an executor-provisioning policy (policies.spark_provisioning).
#include "base/units.hpp"
#include "core/workload.hpp"
#include "models/dataflow/actor_backend.hpp"
#include "models/dataflow/cluster_layout.hpp"
#include "workloads/spark/spark_apps.hpp"
#include "workloads/spark/spark_metrics.hpp"
#include "workloads/spark/spark_params.hpp"
#include "workloads/spark/spark_sim.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

namespace cs {
namespace {

/** What the logs of replayed applications recorded of their cache: the simulated cache does not see those reads
 *  (they are inside the recorded task times), so a bare "0 reads" would mislead. Empty when nothing is replayed. */
std::string replayed_cache_line(const std::vector<SparkApplication>& apps)
{
  long replays = 0, reads = 0, memory = 0;
  for (const auto& a : apps)
    if (a.recorded_cache_reads >= 0) {
      ++replays;
      reads += a.recorded_cache_reads;
      memory += a.recorded_memory_reads;
    }
  if (replays == 0)
    return "";
  return fmt::format("  replayed  {} application(s) at their recorded task times, reads included: the logs read "
                     "persisted RDDs {} times, {} from memory; no cache policy changes that\n",
                     replays, reads, memory);
}

std::string summary_lines(const RunEnv& env, const SparkParams& p, const std::string& cache,
                          const std::string& eviction, const std::string& provisioning, const RunMetrics& metrics,
                          int apps, bool all_replays)
{
  const ClusterParams& cluster = *env.cluster;
  std::string out = fmt::format("  cluster   {} racks x {} hosts, {} cores and {} each; executors {} cores, {} heap\n",
                                cluster.racks, cluster.hosts_per_rack, env.platform->host.cores,
                                units::format_bytes(env.platform->host.memory_bytes), p.executor_cores,
                                units::format_bytes(p.executor_memory.value));
  out +=
      fmt::format("  workload  {} applications; cache {} ({}), provisioning {}\n", apps, cache, eviction, provisioning);
  out += fmt::format(
      "  apps      mean JCT {}  p50 {}  p95 {}  makespan {}\n", units::format_time(metrics.at(metric::mean_jct_s)),
      units::format_time(metrics.at(metric::p50_jct_s)), units::format_time(metrics.at(metric::p95_jct_s)),
      units::format_time(metrics.at(metric::makespan_s)));
  if (!all_replays) // a replay's reads are inside its recorded times: the replayed line says what the logs read
    out += fmt::format(
        "  cache     hit rate {:.1f}% of {:.0f} reads (disk {:.1f}%); recomputed {}, fetched remotely {}, "
        "migrated {}\n",
        100 * metrics.at(metric::cache_hit_rate), metrics.at(metric::cache_reads),
        100 * metrics.at(metric::cache_disk_hit_rate), units::format_bytes(metrics.at(metric::bytes_recomputed)),
        units::format_bytes(metrics.at(metric::bytes_fetched_remote)),
        units::format_bytes(metrics.at(metric::bytes_migrated)));
  out += fmt::format("  cores     cluster utilisation {:.1f}%, executors busy {:.1f}%, held {:.1f}%; executors +{:.0f} "
                     "-{:.0f}\n",
                     100 * metrics.at(metric::cluster_utilization), 100 * metrics.at(metric::executor_utilization),
                     100 * metrics.at(metric::allocated_share), metrics.at(metric::executors_added),
                     metrics.at(metric::executors_removed));
  out += fmt::format("  locality  process {:.1f}%  node {:.1f}%  any {:.1f}% of {:.0f} tasks\n",
                     100 * metrics.at(metric::locality_process), 100 * metrics.at(metric::locality_node),
                     100 * metrics.at(metric::locality_any), metrics.at(metric::tasks));
  if (metrics.at(metric::failed_task_attempts) > 0 || metrics.at(metric::failed_jobs) > 0)
    out += fmt::format("  failures  {:.0f} failed task attempts replayed; {:.0f} jobs failed as recorded\n",
                       metrics.at(metric::failed_task_attempts), metrics.at(metric::failed_jobs));
  return out;
}

class SparkKind : public Workload {
public:
  void configure(ObjectReader& r) override
  {
    read_spark(r.child("spark", "workload.kind spark: applications, executors and memory"), params_, !r.describing());
  }

  void check(const WorkloadEnv& env) const override
  {
    const ClusterParams& cluster = *env.cluster;
    if (!cluster.is_cpu_cluster())
      throw env.error_at("workload.kind", "spark runs on a CPU cluster: give cluster.racks and hosts_per_rack");
    check_actor_backend(env, "spark");
    const PlatformSpec platform = build_platform_spec(cluster, *env.device);
    if (platform.host.disk_bandwidth <= 0)
      throw env.error_at("cluster.host.disk_bandwidth", "spark needs hosts with disks (disk_bandwidth > 0)");
    if (params_.executor_cores > platform.host.cores)
      throw env.error_at("workload.spark.executor_cores",
                         fmt::format("an executor of {} cores fits on no host ({} cores each)", params_.executor_cores,
                                     platform.host.cores));
    if (executor_container_bytes(params_) > platform.host.memory_bytes)
      throw env.error_at("workload.spark.executor_memory",
                         fmt::format("an executor container of {} (heap plus overhead) fits on no host ({} each)",
                                     units::format_bytes(executor_container_bytes(params_)),
                                     units::format_bytes(platform.host.memory_bytes)));
    if (params_.replication > cluster.racks * cluster.hosts_per_rack)
      throw env.error_at("workload.spark.replication", "more HDFS replicas than hosts");
    for (std::size_t i = 0; i < params_.applications.size(); ++i) {
      const auto& a = params_.applications[i];
      const std::string key = fmt::format("workload.spark.applications[{}].event_log", i);
      if (!a.event_log.empty() && !std::filesystem::exists(env.source->resolve(a.event_log)))
        throw env.error_at(key, "event log not found: " + env.source->resolve(a.event_log));
    }
  }

  WorkloadOutput run(const RunEnv& env) const override
  {
    const PlatformSpec& platform = *env.platform;
    std::vector<SparkApplication> apps;
    try {
      apps = spark_applications(params_, env.source->base_dir());
    } catch (const std::invalid_argument& e) { // an application the generator or the log cannot make
      throw env.error_at("workload.spark.applications", e.what());
    }
    const ClusterLayout layout = ClusterLayout::of(platform.topology);
    auto cache = env.policies->make<SparkCache>("spark_cache", *env.source, "vanilla");
    auto provisioning = env.policies->make<SparkProvisioning>("spark_provisioning", *env.source, "static");
    const int hosts = platform.topology.host_count();
    const StragglerModel stragglers(env.cluster->stragglers, hosts, 1, static_cast<std::uint64_t>(env.seed));
    SparkSetup setup;
    setup.platform = &platform;
    setup.layout = &layout;
    setup.params = &params_;
    setup.cache = cache.get();
    setup.provisioning = provisioning.get();
    setup.stragglers = stragglers.any() ? &stragglers : nullptr;
    setup.seed = static_cast<std::uint64_t>(env.seed);
    auto runtime = env.actors();
    const SparkOutcome outcome = simulate_spark(*runtime, apps, setup);
    WorkloadOutput out;
    out.metrics = spark_metrics(outcome);
    out.files.emplace_back("apps.csv", spark_apps_csv(apps, outcome));
    out.files.emplace_back("stages.csv", spark_stages_csv(apps, outcome));
    out.files.emplace_back("utilisation.csv", spark_cores_csv(outcome));
    if (env.trace) {
      std::vector<std::string> names;
      for (int h = 0; h < hosts; ++h)
        names.push_back(platform.topology.vertex(platform.topology.hosts()[h]).name);
      out.trace_json = spark_trace_json(apps, outcome, names);
    }
    out.summary =
        summary_lines(env, params_, env.policies->name("spark_cache", "vanilla"), cache->eviction_name(),
                      env.policies->name("spark_provisioning", "static"), out.metrics, static_cast<int>(apps.size()),
                      std::all_of(apps.begin(), apps.end(), [](const auto& a) { return a.recorded_cache_reads >= 0; }));
    out.summary += replayed_cache_line(apps);
    out.wall_note = fmt::format(" ({} activities, {} tasks)", outcome.activities, outcome.tasks.size());
    for (const auto& app : apps)
      out.warnings.insert(out.warnings.end(), app.left_out.begin(), app.left_out.end());
    return out;
  }

  std::unique_ptr<Workload> clone() const override { return std::make_unique<SparkKind>(*this); }

private:
  SparkParams params_;
};

} // namespace

CS_REGISTER_WORKLOAD(SparkKind, "spark", "Spark applications on a CPU cluster");

} // namespace cs
