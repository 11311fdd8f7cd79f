// The device catalog: datasheet peaks, memory and links of each device, with sources (efficiencies live in profiles).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cs {

/** One device of the catalog. All values SI: FLOP/s, bytes, bytes/s, seconds. */
struct DeviceSpec {
  std::string name;                         // catalog key, e.g. "h100-sxm5"
  std::string display_name;                 // e.g. "NVIDIA H100 SXM5 80GB"
  std::string kind;                         // "gpu" | "cpu"
  std::map<std::string, double> peak_flops; // per dtype (fp32, tf32, bf16, fp16, fp8, fp64), dense
  double memory_bandwidth = 0;
  double memory_bytes = 0;
  int sms = 0;
  double l2_bytes = 0;
  double smem_per_sm = 0; // shared memory one SM can give its blocks (fused kernels' tiling)
  double nvlink_bandwidth = 0; // per GPU per direction (0 = no NVLink)
  double nvlink_latency = 0;
  double nvlink_achievable = 0; // what NCCL moves per GPU per direction (its topology model's effective rate)
  bool nvls = false;            // NVSwitch generation with in-switch reduction
  double nvls_efficiency = 0;   // the share of the port rate NVLS reductions reach (NCCL's nvlsEfficiency)
  double pcie_bandwidth = 0;    // per direction
  double pcie_latency = 0;
  int cores = 0;                              // CPU nodes
  double core_speed = 0;                      // FLOP/s per core, CPU nodes
  double disk_bandwidth = 0;                  // CPU nodes
  std::map<std::string, std::string> sources; // field -> where the number comes from

  /** Peak FLOP/s for `dtype`, or 0 when the device has no such unit. */
  double peak(const std::string& dtype) const;
};

/** Devices shipped as models/devices/<name>.yaml (compiled into the binary, so it runs from any folder). */
class DeviceCatalog {
public:
  static const DeviceCatalog& builtin();
  /** Parses catalog YAML texts (one device per text); throws std::runtime_error naming the bad entry. */
  explicit DeviceCatalog(const std::vector<std::pair<std::string, std::string>>& named_texts);

  const DeviceSpec* find(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::map<std::string, DeviceSpec>& all() const { return devices_; }

private:
  std::map<std::string, DeviceSpec> devices_;
};

} // namespace cs
