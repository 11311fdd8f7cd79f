// The kernel cost-model interface and the standard stack: profiled table, else wave-quantised GEMM, else roofline.
#pragma once

#include "models/cost/cost_breakdown.hpp"
#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "models/kernels/kernel.hpp"

#include <memory>

namespace cs {

/** Predicts how long one kernel takes on one device. Implementations are immutable and thread-compatible. */
class KernelCostModel {
public:
  virtual ~KernelCostModel() = default;
  /** Throws std::invalid_argument when the device cannot run the kernel (no unit for its dtype). */
  virtual CostBreakdown predict(const Kernel& kernel) const = 0;
};

/** t = launch + max(flops / (peak[dtype] x efficiency[dtype]), bytes / (bandwidth x memory efficiency)).
 *  Host and peer copies use the profile's achieved copy bandwidth, else the catalog's PCIe/NVLink rate. */
class RooflineModel : public KernelCostModel {
public:
  RooflineModel(const DeviceSpec& device, const DeviceProfile& profile) : device_(device), profile_(profile) {}
  CostBreakdown predict(const Kernel& kernel) const override;

private:
  /** The share of the dtype's peak a kernel reaches: the profile's compute efficiency, or for attention its
   *  sequence-dependent curve. */
  double compute_efficiency(const Kernel& kernel, const std::string& dtype) const;
  const DeviceSpec& device_;
  const DeviceProfile& profile_;
};

/** A GEMM tile's main-loop length in K-steps: k plus the prologue and epilogue. The profile gives those in K-steps of
 *  a 16-bit main loop; they move a fixed number of bytes, so a dtype of b bytes per element takes 2/b times as many
 *  of its own K-steps (fp8 twice as many, fp32 and tf32 half). */
double gemm_k_steps(double k, double k_overhead, const std::string& dtype);

/** Tiles, slots and waves of a GEMM's output for one tile shape: tiles = ceil(m/Tm) ceil(n/Tn) batch,
 *  waves = ceil(tiles / (SMs x CTAs per SM)). */
struct WaveCount {
  double tiles = 0;
  double slots = 0;
  double waves = 0;
};
WaveCount gemm_waves(double m, double n, double batch, const GemmTile& tile, int sms, int ctas_per_sm);

/** GEMMs with tile and wave quantisation: a partial wave costs a full one, so the compute time is that of
 *  waves x slots whole tiles at the tile's efficiency, each tile's main loop over K lengthened by the profile's
 *  prologue and epilogue (gemm_k_overhead, in K-steps); compute and memory overlap by gemm_overlap. Like cuBLAS's
 *  heuristics, it picks the candidate tile with the shortest time. Other kernels go to the roofline. */
class GemmWaveModel : public KernelCostModel {
public:
  GemmWaveModel(const DeviceSpec& device, const DeviceProfile& profile)
      : device_(device), profile_(profile), roofline_(device, profile)
  {}
  CostBreakdown predict(const Kernel& kernel) const override;

private:
  const DeviceSpec& device_;
  const DeviceProfile& profile_;
  RooflineModel roofline_;
};

/** Measured times interpolated in log space where the profile's tables cover the shape; `fallback` elsewhere.
 *  Covered: every dimension inside the table's range and the nearest measured shape within a factor of 2 in
 *  every dimension. The estimate is a weighted least-squares plane in (log shape, log time) through the
 *  nearest points (Eigen), so it reproduces measured points exactly and power laws between them. */
class ProfiledTableModel : public KernelCostModel {
public:
  ProfiledTableModel(const DeviceProfile& profile, std::unique_ptr<KernelCostModel> fallback);
  CostBreakdown predict(const Kernel& kernel) const override;

private:
  struct Table;
  std::vector<std::shared_ptr<const Table>> tables_;
  std::unique_ptr<KernelCostModel> fallback_;
};

/** The stack every workload uses: ProfiledTableModel over GemmWaveModel (over RooflineModel). The device and
 *  profile must outlive the model. */
std::unique_ptr<KernelCostModel> make_cost_model(const DeviceSpec& device, const DeviceProfile& profile);

} // namespace cs
