#include "sim/goodput/checkpoint_traffic.hpp"

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

// The switch every GPU's route to the storage climbs to: the fabric's top (core or spine), else its one switch.
int top_switch(const Topology& t)
{
  for (const char* name : {"core", "spine", "switch", "leaf0", "rail0/leaf0"})
    if (const int v = t.find_vertex(name); v >= 0)
      return v;
  return -1;
}

} // namespace

double simulate_checkpoint_write(const Scenario& s, double bytes_per_gpu)
{
  PlatformSpec platform = build_platform_spec(s.cluster, *DeviceCatalog::builtin().find(s.cluster.device));
  Topology& t = platform.topology;
  const int top = top_switch(t);
  if (top < 0) // no switch at all: the storage link alone bounds the write
    return bytes_per_gpu * s.cluster.gpus / s.cluster.storage.bandwidth.value;
  const int storage = t.add_host("storage", s.cluster.nodes, 0);
  const int link = t.add_link("storage", s.cluster.storage.bandwidth.value, s.cluster.network.latency.value, "storage");
  t.add_edge(top, storage, link);
  const int storage_host = t.host_count() - 1;
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
