// Workload kind `collective`: an nccl-tests-like sweep of one collective over message sizes.
#include "core/chrome_trace.hpp"
#include "core/workload.hpp"
#include "workloads/collective/collective_metrics.hpp"
#include "workloads/collective/collective_params.hpp"
#include "workloads/collective/collective_sweep.hpp"

#include <fmt/format.h>

namespace cs {
namespace {

class CollectiveWorkload : public Workload {
public:
  void configure(ObjectReader& r) override
  {
    read_collective(r.child("collective", "workload.kind collective: the operation and the sizes to sweep"), params_);
  }

  void check(const WorkloadEnv& env) const override
  {
    const ClusterParams& cluster = *env.cluster;
    if (cluster.is_cpu_cluster())
      throw env.error_at("workload.kind", "collective sweeps run on GPU clusters (nodes of GPUs)");
    const int gpus = cluster.nodes * cluster.gpus_per_node;
    const auto& col = params_;
    const int ranks = col.ranks > 0 ? col.ranks : gpus;
    if (ranks > gpus)
      throw env.error_at("workload.collective.ranks",
                         fmt::format("a group of {} ranks is larger than the cluster's {} GPUs", ranks, gpus));
    if (col.op == "p2p" && ranks < 2)
      throw env.error_at("workload.collective.ranks", "p2p needs at least 2 ranks");
    if (col.root >= ranks)
      throw env.error_at("workload.collective.root",
                         fmt::format("root {} is not one of the {} ranks", col.root, ranks));
    if (col.algorithm != "auto") {
      PlatformSpec platform = build_platform_spec(cluster, *env.device);
      std::vector<int> hosts(ranks);
      for (int r = 0; r < ranks; ++r)
        hosts[r] = r;
      try {
        choose_collective(col.op, col.algorithm, col.max_bytes.value, group_shape(platform, hosts));
      } catch (const std::invalid_argument& e) {
        throw env.error_at("workload.collective.algorithm", e.what());
      }
    }
  }

  WorkloadOutput run(const RunEnv& env) const override
  {
    const auto& c = params_;
    const PlatformSpec& platform = *env.platform;
    const int ranks = c.ranks > 0 ? c.ranks : platform.topology.host_count();
    // The analytical backend prices by the closed forms where they hold (DESIGN.md §3); simgrid always runs flows.
    SweepPricing pricing = SweepPricing::FLOWS;
    if (env.backend == Backend::ANALYTICAL && c.pricing == "closed-form")
      pricing = SweepPricing::CLOSED_FORM;
    else if (env.backend == Backend::ANALYTICAL && c.pricing == "auto" && closed_forms_fit(env.cluster->network))
      pricing = SweepPricing::CLOSED_FORM_WHERE_EXACT;
    const StragglerModel stragglers(env.cluster->stragglers, platform.topology.host_count(), env.cluster->gpus_per_node,
                                    static_cast<std::uint64_t>(env.seed));
    CollectiveSweep sweep =
        build_collective_sweep(c, platform, ranks, pricing, stragglers.any() ? &stragglers : nullptr);
    Timeline timeline = env.execute(sweep.graph);
    auto rows = collective_rows(sweep, timeline, c.op);
    WorkloadOutput out;
    out.metrics = collective_metrics(sweep, rows, platform);
    if (env.trace)
      out.trace_json = chrome_trace_json(sweep.graph, timeline, platform);
    out.files.emplace_back("collective.csv", collective_csv(rows));
    const ClusterParams& cl = *env.cluster;
    out.summary = fmt::format("  cluster   {} x {} {} ({}{}, {} network), backend {}\n", cl.nodes, cl.gpus_per_node,
                              platform.device->display_name, spelling(kIntraNodeKinds, cl.intra_node.kind),
                              platform.nvls ? " + NVLS" : "", spelling(kNetworkKinds, cl.network.kind),
                              backend_name(env.backend));
    if (env.backend == Backend::ANALYTICAL)
      out.summary += fmt::format("  pricing   {} of {} sizes by closed form, the rest as list-scheduled flows\n",
                                 sweep.closed_form_sizes, sweep.sizes.size());
    out.summary += nccl_tests_table(rows, c.op, ranks);
    out.wall_note = fmt::format(" ({} tasks)", sweep.graph.size());
    return out;
  }

  std::unique_ptr<Workload> clone() const override { return std::make_unique<CollectiveWorkload>(*this); }

private:
  CollectiveParams params_;
};

} // namespace

CS_REGISTER_WORKLOAD(CollectiveWorkload, "collective", "an nccl-tests-like sweep");

} // namespace cs
