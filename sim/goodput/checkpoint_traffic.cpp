#include "sim/goodput/checkpoint_traffic.hpp"

#include "base/units.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"
#include "sim/exec/executor.hpp"

#include <functional>

namespace cs {
namespace {

// One flow per GPU, to the host `destination(gpu)` picks; the makespan.
double simulate_flows(const Scenario& s, const PlatformSpec& platform, double bytes_per_gpu,
                      const std::function<int(int)>& destination)
{
  TaskGraph graph;
  const int gpus = s.cluster.gpus;
  graph.reserve(static_cast<std::size_t>(gpus));
  for (int gpu = 0; gpu < gpus; ++gpu)
    graph.add_transfer(graph.add_stream(gpu, "checkpoint"), gpu, destination(gpu), bytes_per_gpu, "checkpoint", {});
  graph.finalize();
  // The analytical backend: SimGrid's engine starts once per process, and the step may already have used it.
  return run_backend(Backend::ANALYTICAL, graph, platform).makespan;
}

// The storage behind one link of its bandwidth, on the fabric's top switch (core or spine). A fabric of one level
// (a star, a single leaf, rails without a spine) has no top: a storage switch then joins every switch.
int attach_storage(Topology& t, const ClusterParams& cluster)
{
  int top = -1;
  for (const char* name : {"core", "spine"})
    if (top < 0)
      top = t.find_vertex(name);
  const int storage = t.add_host("storage", cluster.nodes, 0);
  const int link = t.add_link("storage", cluster.storage.bandwidth.value, cluster.network.latency.value, "storage");
  if (top >= 0) {
    t.add_edge(top, storage, link);
  } else {
    const int hub = t.add_switch("storage-switch");
    t.add_edge(hub, storage, link);
    for (int v = 0; v < static_cast<int>(t.vertices().size()); ++v)
      if (!t.vertex(v).is_host && v != hub) // unbounded: the NICs and the storage link bound the write
        t.add_edge(v, hub, t.add_link(t.vertex(v).name + "/storage", units::kMaxRate, 0.0, "storage-uplink"));
  }
  return t.host_count() - 1;
}

} // namespace

double simulate_checkpoint_write(const Scenario& s, double bytes_per_gpu)
{
  PlatformSpec platform = build_platform_spec(s.cluster, *DeviceCatalog::builtin().find(s.cluster.device));
  const int storage_host = attach_storage(platform.topology, s.cluster);
  return simulate_flows(s, platform, bytes_per_gpu, [storage_host](int) { return storage_host; });
}

double simulate_peer_copy(const Scenario& s, double bytes_per_gpu)
{
  if (s.cluster.nodes < 2)
    return 0;
  const PlatformSpec platform = build_platform_spec(s.cluster, *DeviceCatalog::builtin().find(s.cluster.device));
  const int gpus = s.cluster.gpus, per_node = s.cluster.gpus_per_node;
  return simulate_flows(s, platform, bytes_per_gpu, [gpus, per_node](int gpu) { return (gpu + per_node) % gpus; });
}

} // namespace cs
