#include "sim/run/scenario_checks.hpp"

#include "models/cost/device_profile.hpp"
#include "models/device_catalog.hpp"
#include "models/workloads/layer_graph.hpp"
#include "policies/registry.hpp"
#include "models/collectives/collective_model.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "policies/sync/gradient_sync.hpp"
#include "policies/mapreduce/task_scheduler.hpp"
#include "sim/platform/platform_spec.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <filesystem>
#include <sstream>

namespace cs {

InputError scenario_error(const Scenario& s, const std::string& dotted_path, const std::string& message)
{
  YAML::Node node = s.resolved;
  YAML::Node best = node;
  std::stringstream ss(dotted_path);
  for (std::string key; std::getline(ss, key, '.');) {
    if (!node.IsMap() || !node[key].IsDefined())
      break;
    node = node[key];
    best = node;
  }
  if (best.Tag().rfind("!cs-set-", 0) == 0) {
    std::size_t index = std::stoul(best.Tag().substr(8));
    std::string text = index < s.overrides.size() ? s.overrides[index] + ": " : "";
    return InputError("--set", 1, static_cast<int>(index) + 1, text + message);
  }
  YAML::Mark mark = best.Mark();
  if (mark.is_null())
    return InputError(s.file, 1, 1, message);
  return InputError(s.file, mark.line + 1, mark.column + 1, message);
}

namespace {

template <class Interface>
void check_policy(const Scenario& s, const std::string& key, const std::string& name)
{
  if (name.empty())
    return;
  const auto& reg = Registry<Interface>::instance();
  if (!reg.has(name)) {
    std::string valid;
    for (const auto& n : reg.names())
      valid += (valid.empty() ? "" : ", ") + n;
    throw scenario_error(s, "policies." + key,
                         fmt::format("unknown {} policy '{}' (expected one of: {})", key, name, valid));
  }
}

void check_unimplemented_domain(const Scenario& s, const std::string& key, const std::string& name)
{
  if (!name.empty())
    throw scenario_error(s, "policies." + key,
                         fmt::format("no {} policies are implemented yet, so '{}' cannot be used", key, name));
}

} // namespace

std::string pipeline_schedule_name(const Scenario& s)
{
  if (!s.policies.pipeline.empty())
    return s.policies.pipeline;
  return s.workload.parallel.vpp > 1 ? "interleaved-1f1b" : "1f1b";
}

void check_scenario(const Scenario& s)
{
  const auto& catalog = DeviceCatalog::builtin();
  const auto& c = s.cluster;
  const std::string& device_name = c.device;
  const DeviceSpec* d = catalog.find(device_name);
  if (!d) {
    std::string valid;
    for (const auto& n : catalog.names())
      valid += (valid.empty() ? "" : ", ") + n;
    throw scenario_error(s, "cluster.device", fmt::format("unknown device '{}' (clustersim list devices: {})", c.device, valid));
  }
  if (c.is_cpu_cluster() && d->kind != "cpu")
    throw scenario_error(s, "cluster.device", "a CPU cluster (racks) needs a cpu device such as cpu-node");
  if (!c.is_cpu_cluster()) {
    if (d->kind != "gpu")
      throw scenario_error(s, "cluster.device", fmt::format("'{}' is not a GPU; GPU clusters take nodes of GPUs", c.device));
    if ((c.intra_node.kind == "nvswitch" || c.intra_node.kind == "nvlink-mesh") && d->nvlink_bandwidth <= 0 &&
        c.intra_node.bandwidth.value <= 0)
      throw scenario_error(s, "cluster.intra_node.kind", fmt::format("{} has no NVLink; use intra_node.kind: pcie", c.device));
    if (c.intra_node.kind == "nvlink-mesh" && c.gpus_per_node != 8)
      throw scenario_error(s, "cluster.gpus_per_node", "nvlink-mesh is the 8-GPU DGX-1 hybrid cube-mesh: gpus_per_node must be 8");
    if (c.network.levels.size() > 1 && c.network.levels.back().oversubscription != 1.0)
      throw scenario_error(s, "cluster.network.levels", "the top switch level has no uplinks: its oversubscription must be 1");
  }

  if (!c.profile.empty()) {
    DeviceProfile p = load_profile(c.profile); // InputError with the profile's own position
    if (p.device != c.device)
      throw scenario_error(s, "cluster.profile",
                           fmt::format("profile {} is for device '{}', not '{}'", c.profile, p.device, c.device));
  } else if (!builtin_profile(c.device) && !c.is_cpu_cluster()) {
    throw scenario_error(s, "cluster.device", fmt::format("no profile is shipped for '{}'; give cluster.profile", c.device));
  }

  check_policy<GradientSync>(s, "sync", s.policies.sync);
  if (!s.policies.mapreduce.empty())
    check_policy<MapReduceScheduler>(s, "mapreduce", s.policies.mapreduce);
  check_policy<PipelineSchedule>(s, "pipeline", s.policies.pipeline);
  check_unimplemented_domain(s, "moe", s.policies.moe);
  check_unimplemented_domain(s, "spark_cache", s.policies.spark_cache);
  check_unimplemented_domain(s, "spark_provisioning", s.policies.spark_provisioning);
  check_unimplemented_domain(s, "cluster", s.policies.cluster);

  if (!c.network.background.empty()) {
    PlatformSpec platform = build_platform_spec(c, *d);
    try {
      apply_background_traffic(platform, c.network, std::filesystem::path(s.file).parent_path().string());
    } catch (const std::invalid_argument& e) {
      throw scenario_error(s, "cluster.network.background", e.what());
    }
  }
  const auto& w = s.workload;
  if (c.intra_node.nvls && !c.is_cpu_cluster() && !d->nvls)
    throw scenario_error(s, "cluster.intra_node.nvls", fmt::format("{} has no NVLS-capable NVSwitch (H100/H200 only)", c.device));
  if (w.kind == "collective") {
    if (c.is_cpu_cluster())
      throw scenario_error(s, "workload.kind", "collective sweeps run on GPU clusters (nodes of GPUs)");
    const int gpus = c.nodes * c.gpus_per_node;
    const auto& col = w.collective;
    const int ranks = col.ranks > 0 ? col.ranks : gpus;
    if (ranks > gpus)
      throw scenario_error(s, "workload.collective.ranks",
                           fmt::format("a group of {} ranks is larger than the cluster's {} GPUs", ranks, gpus));
    if (col.op == "p2p" && ranks < 2)
      throw scenario_error(s, "workload.collective.ranks", "p2p needs at least 2 ranks");
    if (col.root >= ranks)
      throw scenario_error(s, "workload.collective.root", fmt::format("root {} is not one of the {} ranks", col.root, ranks));
    if (col.algorithm != "auto") {
      PlatformSpec platform = build_platform_spec(c, *d);
      std::vector<int> hosts(ranks);
      for (int r = 0; r < ranks; ++r)
        hosts[r] = r;
      try {
        choose_collective(col.op, col.algorithm, col.max_bytes.value, group_shape(platform, hosts));
      } catch (const std::invalid_argument& e) {
        throw scenario_error(s, "workload.collective.algorithm", e.what());
      }
    }
  }
  if (w.kind == "mapreduce") {
    const auto& m = w.mapreduce;
    if (!c.is_cpu_cluster())
      throw scenario_error(s, "workload.kind", "mapreduce runs on a CPU cluster: give cluster.racks and hosts_per_rack");
    if (s.backend != "simgrid")
      throw scenario_error(s, "backend", "mapreduce runs as SimGrid actors; the analytical backend does not model it");
    PlatformSpec platform = build_platform_spec(c, *d);
    const int containers = m.containers_per_host > 0 ? m.containers_per_host : platform.host.cores;
    if (containers < 1)
      throw scenario_error(s, "workload.mapreduce.containers_per_host", "a host must hold at least one container");
    if (platform.host.disk_bandwidth <= 0)
      throw scenario_error(s, "cluster.host.disk_bandwidth", "mapreduce needs hosts with disks (disk_bandwidth > 0)");
    for (std::size_t i = 0; i < m.middleboxes.size(); ++i) {
      int v = platform.topology.find_vertex(m.middleboxes[i]);
      if (v < 0 || platform.topology.vertex(v).is_host)
        throw scenario_error(s, "workload.mapreduce.middleboxes",
                             fmt::format("middlebox '{}' is not a switch of this cluster (switches are named like agg0, "
                                         "core, rack0/tor)", m.middleboxes[i]));
    }
    if (m.replication > c.racks * c.hosts_per_rack)
      throw scenario_error(s, "workload.mapreduce.replication",
                           fmt::format("{} replicas need at least that many hosts (the cluster has {})", m.replication,
                                       c.racks * c.hosts_per_rack));
    if (!m.trace.file.empty()) {
      auto path = std::filesystem::path(m.trace.file);
      if (path.is_relative())
        path = std::filesystem::path(s.file).parent_path() / path;
      if (!std::filesystem::is_regular_file(path))
        throw scenario_error(s, "workload.mapreduce.trace.file", "trace file not found: " + path.string());
    }
  }
  if (w.kind == "transformer-training") {
    if (c.is_cpu_cluster())
      throw scenario_error(s, "workload.kind", "transformer-training needs a GPU cluster (nodes of GPUs), not racks");
    const auto& p = w.parallel;
    if (p.ep != 1)
      throw scenario_error(s, "workload.parallel",
                           "only data (with ZeRO-1/2), tensor (with or without sequence parallelism) and pipeline "
                           "parallelism (ep = 1) are implemented so far");
    const auto& graph = w.model.graph;
    if (!graph.empty()) {
      // A layer graph has costs per layer but no shape to split: it runs data and pipeline parallelism only.
      if (p.tp != 1)
        throw scenario_error(s, "workload.parallel.tp", "a layer graph (workload.model.graph) has no tensor-parallel "
                                                        "split; use tp = 1");
      if (p.vpp != 1)
        throw scenario_error(s, "workload.parallel.vpp", "a layer graph runs one stage per device (vpp = 1)");
      if (p.zero != 0)
        throw scenario_error(s, "workload.parallel.zero", "ZeRO is not implemented for layer graphs");
      if (p.pp > static_cast<int>(graph.size()))
        throw scenario_error(s, "workload.parallel.pp", fmt::format("pp = {} is more stages than the graph's {} layers",
                                                                    p.pp, graph.size()));
      if (pipeline_schedule_name(s) == "graph-pipeline") {
        const auto branch = layer_branches(graph);
        const int branches = branch.empty() ? 0 : *std::max_element(branch.begin(), branch.end()) + 1;
        if (p.pp < branches)
          throw scenario_error(s, "workload.parallel.pp",
                               fmt::format("the layer graph has {} branches; graph-pipeline needs pp >= {}", branches,
                                           branches));
      }
    }
    if (p.zero > 2 && (p.pp > 1 || p.vpp > 1))
      throw scenario_error(s, "workload.parallel.zero", "ZeRO-3 with pipeline parallelism is not implemented yet "
                                                        "(zero 1 and 2 are)");
    if (p.sequence_parallel && p.tp == 1)
      throw scenario_error(s, "workload.parallel.sequence_parallel", "sequence parallelism splits the TP group's "
                                                                     "tokens: it needs tp > 1");
    if (p.tp > c.gpus_per_node || c.gpus_per_node % p.tp != 0)
      throw scenario_error(s, "workload.parallel.tp",
                           fmt::format("tp = {} must divide a node's {} GPUs (tensor parallelism stays inside a node)", p.tp,
                                       c.gpus_per_node));
    if (graph.empty() && (w.model.heads % p.tp != 0 || w.model.ffn % p.tp != 0))
      throw scenario_error(s, "workload.parallel.tp",
                           fmt::format("tp = {} must divide the heads ({}) and the ffn size ({})", p.tp, w.model.heads, w.model.ffn));
    if (graph.empty() && w.model.kv() % p.tp != 0) // Megatron splits key/value heads over the ranks too
      throw scenario_error(s, "workload.parallel.tp",
                           fmt::format("tp = {} must divide the key/value heads ({})", p.tp, w.model.kv()));
    int gpus = c.nodes * c.gpus_per_node;
    if (gpus % (p.pp * p.tp) != 0)
      throw scenario_error(s, "workload.parallel.pp", fmt::format("tp x pp = {} x {} does not divide the cluster's {} GPUs", p.tp, p.pp, gpus));
    int dp = p.dp > 0 ? p.dp : gpus / (p.pp * p.tp);
    if (dp * p.pp * p.tp > gpus)
      throw scenario_error(s, p.dp > 0 ? "workload.parallel.dp" : "workload.parallel.pp",
                           fmt::format("dp x tp x pp = {} x {} x {} is larger than the cluster's {} GPUs", dp, p.tp, p.pp, gpus));
    if (w.batch.global % (dp * w.batch.micro) != 0)
      throw scenario_error(s, "workload.batch.global",
                           fmt::format("global batch {} does not divide into dp ({}) x micro ({}) = {} per step", w.batch.global,
                                       dp, w.batch.micro, dp * w.batch.micro));
    if (p.pp > 1 || p.vpp > 1) {
      const std::string name = pipeline_schedule_name(s);
      auto schedule = Registry<PipelineSchedule>::instance().create(name);
      const int v = schedule->chunks(p.vpp);
      if (p.vpp > 1 && v == 1)
        throw scenario_error(s, "workload.parallel.vpp", fmt::format("vpp = {} needs policies.pipeline: interleaved-1f1b", p.vpp));
      if (!p.stage_layers.empty()) {
        int sum = 0;
        for (int l : p.stage_layers)
          sum += l;
        const bool positive = std::all_of(p.stage_layers.begin(), p.stage_layers.end(), [](int l) { return l > 0; });
        if (!graph.empty() || static_cast<int>(p.stage_layers.size()) != p.pp * v || !positive ||
            sum != w.model.layers)
          throw scenario_error(s, "workload.parallel.stage_layers",
                               fmt::format("stage_layers needs pp x vpp = {} positive entries summing to the {} "
                                           "transformer layers",
                                           p.pp * v, w.model.layers));
      }
      if (graph.empty() && p.stage_layers.empty() && p.partition == "even" && w.model.layers % (p.pp * v) != 0)
        throw scenario_error(s, "workload.model.layers",
                             fmt::format("{} layers do not divide into pp x vpp = {} x {} stages (parallel.partition: "
                                         "balanced allows uneven stages)", w.model.layers, p.pp, v));
      if (graph.empty() && w.model.layers < p.pp * v)
        throw scenario_error(s, "workload.model.layers",
                             fmt::format("{} layers are fewer than the pp x vpp = {} x {} stages", w.model.layers, p.pp, v));
      try {
        schedule->order(p.pp, v, w.batch.global / (dp * w.batch.micro));
      } catch (const std::invalid_argument& e) {
        throw scenario_error(s, "workload.batch.global", e.what());
      }
    }
    if (d->peak(w.model.dtype) <= 0)
      throw scenario_error(s, "workload.model.dtype", fmt::format("{} has no {} compute units", c.device, w.model.dtype));
    if (s.policies.sync.empty())
      throw scenario_error(s, "policies.sync", "data-parallel training needs a policies.sync (e.g. ring-allreduce)");
  }
}

} // namespace cs
