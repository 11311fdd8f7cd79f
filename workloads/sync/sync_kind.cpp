// Workload kind `sync-training`: data-parallel training run as actors, one per replica (or per replica and stage),
// under a sync scheme that decides at run time who waits for whom, on a cluster with stragglers.
#include "core/chrome_trace.hpp"
#include "core/workload.hpp"
#include "models/cost/device_profile.hpp"
#include "workloads/sync/sync_metrics.hpp"
#include "workloads/sync/sync_params.hpp"
#include "workloads/sync/sync_world.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace cs {
namespace {

/** The Chrome trace: a process per node, a thread per GPU, its steps and its synchronisations. */
std::string sync_trace_json(const std::vector<SyncSpan>& spans, const SyncSetup& s, const ClusterParams& cluster)
{
  ChromeTrace trace;
  for (int n = 0; n * cluster.gpus_per_node < static_cast<int>(s.worker_host.size()); ++n)
    trace.process(n, "node " + std::to_string(n));
  for (std::size_t w = 0; w < s.worker_host.size(); ++w) {
    const int h = s.worker_host[w];
    trace.thread(h / cluster.gpus_per_node, h % cluster.gpus_per_node, "worker " + std::to_string(w));
  }
  for (const auto& sp : spans) {
    const int h = s.worker_host[sp.worker];
    auto args = nlohmann::ordered_json::object();
    if (sp.group > 0)
      args["group"] = sp.group;
    trace.complete(sp.what, sp.group > 0 ? "sync" : "compute", h / cluster.gpus_per_node, h % cluster.gpus_per_node,
                   sp.start, sp.end, args);
  }
  return trace.dump();
}

class SyncTrainingKind : public Workload {
public:
  void configure(ObjectReader& r) override { read_sync_training(r, params_); }

  int replicas(const ClusterParams& cluster) const { return params_.dp > 0 ? params_.dp : cluster.gpus / params_.pp; }

  void check(const WorkloadEnv& env) const override
  {
    const ClusterParams& cluster = *env.cluster;
    const auto& p = params_;
    if (cluster.is_cpu_cluster())
      throw env.error_at("workload.kind", "sync-training needs a GPU cluster (nodes of GPUs), not racks");
    if (env.device->peak(p.model.dtype) <= 0)
      throw env.error_at("workload.model.dtype",
                         fmt::format("{} has no {} compute units", cluster.device, p.model.dtype));
    auto scheme = env.policies->make<SyncScheme>("sync_scheme", *env.source);
    if (p.pp > 1 && !scheme->pipelined())
      throw env.error_at("workload.parallel.pp", fmt::format("pipelines (pp > 1) run under the sdpipe scheme, not {}",
                                                             env.policies->name("sync_scheme")));
    const int dp = replicas(cluster);
    if (dp < 1 || static_cast<long long>(dp) * p.pp > cluster.gpus)
      throw env.error_at(p.dp > 0 ? "workload.parallel.dp" : "workload.parallel.pp",
                         fmt::format("dp x pp = {} x {} does not fit the cluster's {} GPUs", dp, p.pp, cluster.gpus));
    if (p.model.layers % p.pp != 0)
      throw env.error_at("workload.parallel.pp",
                         fmt::format("{} layers do not divide into {} stages", p.model.layers, p.pp));
    if (p.global_batch % (static_cast<long long>(dp) * p.micro_batch) != 0)
      throw env.error_at("workload.batch.global", fmt::format("global batch {} does not divide into dp ({}) x micro "
                                                              "({})",
                                                              p.global_batch, dp, p.micro_batch));
    if (scheme->group_size() > dp)
      throw env.error_at("policies.sync_scheme.group_size",
                         fmt::format("a group of {} is larger than the {} replicas", scheme->group_size(), dp));
    if (p.servers > cluster.nodes)
      throw env.error_at("workload.servers",
                         fmt::format("{} servers need as many nodes (the cluster has {})", p.servers, cluster.nodes));
    if (static_cast<long long>(dp) * p.steps > 100'000'000)
      throw env.error_at("workload.steps", "dp x steps is more than 100,000,000 steps");
    const std::string steps =
        cluster.stragglers.step_times.empty() ? "" : env.source->resolve(cluster.stragglers.step_times);
    if (!steps.empty() && !std::filesystem::is_regular_file(steps))
      throw env.error_at("cluster.stragglers.step_times", "step-time trace not found: " + steps);
  }

  SyncSetup setup(const RunEnv& env, const StragglerModel& stragglers) const
  {
    const ClusterParams& cluster = *env.cluster;
    const DeviceProfile profile =
        cluster.profile.empty() ? *builtin_profile(env.device->name) : load_profile(cluster.profile);
    auto cost = make_cost_model(*env.device, profile);
    SyncSetup s;
    s.platform = env.platform;
    s.stragglers = &stragglers;
    s.replicas = replicas(cluster);
    ParallelLayout parallel;
    parallel.dp = s.replicas;
    parallel.pp = params_.pp;
    s.compute = step_compute(params_.model, params_.framework,
                             StepShape{params_.global_batch, params_.micro_batch, parallel}, *cost);
    for (int w = 0; w < s.replicas * params_.pp; ++w)
      s.worker_host.push_back(w); // replica r's stage k on GPU r x pp + k: a replica's stages are neighbours
    const int servers = params_.servers > 0 ? params_.servers : cluster.nodes;
    for (int i = 0; i < servers; ++i)
      s.servers.push_back(i * cluster.gpus_per_node);
    s.budget = static_cast<long long>(s.replicas) * params_.steps;
    s.target = params_.target_updates;
    s.flows = env.backend == Backend::SIMGRID;
    s.seed = static_cast<std::uint64_t>(env.seed);
    s.trace = env.trace;
    return s;
  }

  WorkloadOutput run(const RunEnv& env) const override
  {
    const ClusterParams& cluster = *env.cluster;
    StepTimeTrace trace;
    if (!cluster.stragglers.step_times.empty())
      trace = read_step_time_trace(env.source->resolve(cluster.stragglers.step_times));
    const StragglerModel stragglers(cluster.stragglers, cluster.gpus, cluster.gpus_per_node,
                                    static_cast<std::uint64_t>(env.seed), std::move(trace));
    SyncSetup s = setup(env, stragglers);
    auto scheme = env.policies->make<SyncScheme>("sync_scheme", *env.source);
    auto runtime = env.actors();
    if (s.worker_host.size() >= 256) // every group's rings cross the same fabric
      runtime->expect_wide_sharing();
    ActorSyncWorld world(*runtime, s);
    runtime->run(0, [&] { scheme->start(world); });
    WorkloadOutput out;
    out.metrics = sync_metrics(world.result(), s);
    out.summary = sync_summary(out.metrics, s, env.policies->name("sync_scheme"), stragglers.slow_devices());
    out.files.emplace_back("workers.csv", workers_csv(world.result(), s));
    if (env.trace) {
      out.trace_json = sync_trace_json(world.spans(), s, *env.cluster);
      if (world.spans_dropped() > 0)
        out.warnings.push_back(fmt::format("trace.json keeps the first {} spans; {} later ones were left out",
                                           ActorSyncWorld::kMaxSpans, world.spans_dropped()));
    }
    out.wall_note = fmt::format(" ({} steps, {} flows)", world.result().steps, world.result().flows);
    if (const int used = s.replicas * params_.pp; used < cluster.gpus)
      out.warnings.push_back(fmt::format("{} of the cluster's {} GPUs are left idle: dp x pp = {}", cluster.gpus - used,
                                         cluster.gpus, used));
    return out;
  }

  std::unique_ptr<Workload> clone() const override { return std::make_unique<SyncTrainingKind>(*this); }
  bool replays_step_times() const override { return true; }

private:
  SyncTrainingParams params_;
};

} // namespace

CS_REGISTER_WORKLOAD(SyncTrainingKind, "sync-training",
                     "data-parallel training as actors under a sync scheme (all-reduce, parameter servers, gossip, "
                     "partial-reduce, SDPipe), with stragglers");

} // namespace cs
