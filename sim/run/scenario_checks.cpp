#include "sim/run/scenario_checks.hpp"

#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"

#include <fmt/format.h>

namespace cs {

InputError scenario_error(const Scenario& s, const std::string& dotted_path, const std::string& message)
{
  return s.source.error_at(dotted_path, message);
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
    throw scenario_error(s, "cluster.device",
                         fmt::format("unknown device '{}' (clustersim list devices: {})", c.device, valid));
  }
  if (c.is_cpu_cluster() && d->kind != "cpu")
    throw scenario_error(s, "cluster.device", "a CPU cluster (racks) needs a cpu device such as cpu-node");
  if (!c.is_cpu_cluster()) {
    if (d->kind != "gpu")
      throw scenario_error(s, "cluster.device",
                           fmt::format("'{}' is not a GPU; GPU clusters take nodes of GPUs", c.device));
    if ((c.intra_node.kind == IntraNode::NVSWITCH || c.intra_node.kind == IntraNode::NVLINK_MESH) &&
        d->nvlink_bandwidth <= 0 && c.intra_node.bandwidth.value <= 0)
      throw scenario_error(s, "cluster.intra_node.kind",
                           fmt::format("{} has no NVLink; use intra_node.kind: pcie", c.device));
    if (c.intra_node.kind == IntraNode::NVLINK_MESH && c.gpus_per_node != 8)
      throw scenario_error(s, "cluster.gpus_per_node",
                           "nvlink-mesh is the 8-GPU DGX-1 hybrid cube-mesh: gpus_per_node must be 8");
    if (c.network.levels.size() > 1 && c.network.levels.back().oversubscription != 1.0)
      throw scenario_error(s, "cluster.network.levels",
                           "the top switch level has no uplinks: its oversubscription must be 1");
  }

  if (!c.profile.empty()) {
    DeviceProfile p = load_profile(c.profile); // InputError with the profile's own position
    if (p.device != c.device)
      throw scenario_error(s, "cluster.profile",
                           fmt::format("profile {} is for device '{}', not '{}'", c.profile, p.device, c.device));
  } else if (!builtin_profile(c.device) && !c.is_cpu_cluster()) {
    throw scenario_error(s, "cluster.device",
                         fmt::format("no profile is shipped for '{}'; give cluster.profile", c.device));
  }

  if (!c.network.background.empty()) {
    PlatformSpec platform = build_platform_spec(c, *d);
    try {
      apply_background_traffic(platform, c.network, s.source.base_dir());
    } catch (const std::invalid_argument& e) {
      throw scenario_error(s, "cluster.network.background", e.what());
    }
  }
  if (c.intra_node.nvls && !c.is_cpu_cluster() && !d->nvls)
    throw scenario_error(s, "cluster.intra_node.nvls",
                         fmt::format("{} has no NVLS-capable NVSwitch (H100, H200, B200, GB200)", c.device));
  if (!c.stragglers.step_times.empty() && !s.workload->replays_step_times())
    throw scenario_error(s, "cluster.stragglers.step_times",
                         "recorded step times are replayed by workload kinds with workers that step (sync-training); "
                         "this kind takes slow devices and random slowdowns only");
  s.workload->check(s.env(d));
}

} // namespace cs
