// A device profile: the fitted or published parameters the kernel cost models need, stored as versioned JSON.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cs {

/** A GEMM output tile (CTA tile) and the share of peak one full wave of it reaches. */
struct GemmTile {
  int m = 128;
  int n = 128;
  double efficiency = 1.0;
  std::string dtype; // "" = a candidate for every dtype
};

/** Achieved attention throughput: a share of the dtype's peak that grows with the sequence as s / (s + half_seq)
 *  (short sequences leave the GPU's SMs idle between tiles), per pass; causal masking scales the asymptote and the
 *  half-way sequence. efficiency 0 means "as GEMMs" (the dtype's compute efficiency, no ramp). */
struct AttentionEfficiency {
  double forward = 0, forward_half_seq = 0;
  double backward = 0, backward_half_seq = 0;
  double causal_scale = 1, causal_half_seq_scale = 1;
  /** Head size at which the share of peak is half its asymptote in head size, the curve normalised to 1 at head size
   *  128 (smaller heads do less work per tile load) and held at 1 above it; 0: no dependence on the head size. */
  double head_dim_half = 0;
  /** The share of peak the curve gives a pass (at most 1), its asymptote times `scale` (another kernel's ratio). */
  double share(bool backward_pass, bool causal, double seq_kv, double head_dim, double scale = 1) const;
};

/** A head size's rate against head size 128's under a curve whose head-size half-point is `half` (0: 1). Held at 1
 *  above 128: FlashAttention-3's H100 sweeps show head size 256 no faster than 128 (FlashAttention-2 0.88, cuDNN
 *  0.98 forward). */
double head_dim_factor(double head_dim, double half);

/** Measured times of one kernel family and dtype over shapes (kernel_shape() order). */
struct ProfileTable {
  std::string family;
  std::string dtype; // "" for memcpy; memcpy tables use the direction here (d2d, h2d, d2h, p2p)
  std::vector<std::vector<double>> shapes;
  std::vector<double> seconds;
};

/** Parameters of a device's cost models. Peaks, SM count and bandwidths come from the device catalog; the
 *  profile says how much of them kernels achieve. */
struct DeviceProfile {
  static constexpr const char* kSchema = "clustersim-profile/1";
  std::string device;                               // catalog name
  std::string origin;                               // "datasheet" (published measurements) or "fit" (clustersim fit)
  double launch_overhead = 0;                       // seconds added to every kernel
  std::map<std::string, double> compute_efficiency; // per dtype; "default" for any other
  double memory_efficiency = 1;
  /** Per memory-bound kernel (its memory_key(): "memcpy", "softmax", "bandwidth/triad", ...), overriding
   *  memory_efficiency: kernels differ in hidden traffic (write-allocate, streaming stores). */
  std::map<std::string, double> memory_efficiency_by_kernel;
  /** Memory-bound kernels reach bytes / (bytes + memory_half_bytes) of their bandwidth (0: no ramp). */
  double memory_half_bytes = 0;
  AttentionEfficiency attention;
  /** cuDNN's fused attention measured on this device; forward 0: the FlashAttention-2 curve times published ratios. */
  AttentionEfficiency attention_cudnn;
  /** Where cuDNN has no curve of its own and runs at the published ratios to `attention` (measured at head size
   *  128): its own head-size half-point (attention.cudnn_head_dim_half; 0: the curve's). */
  double attention_cudnn_head_dim_half = 0;
  int ctas_per_sm = 1;
  std::vector<GemmTile> gemm_tiles; // candidates; empty means no tile or wave quantisation
  /** A GEMM tile's prologue and epilogue (loading the first tiles of A and B, writing C) in K-steps of its main loop:
   *  a short main loop is bound by them. */
  double gemm_k_overhead = 0;
  /** Share of the shorter of a GEMM's compute and memory time that the longer hides (1: perfect overlap). */
  double gemm_overlap = 1;
  /** Share of the per-tensor rate a GEMM keeps under a scaling (GemmKernel::scaling, e.g. "blockwise"); absent: 1. */
  std::map<std::string, double> gemm_scaling_rate;
  double scaling_rate(const std::string& scaling) const;
  std::map<std::string, double> copy_bandwidth; // achieved h2d / d2h / p2p bytes/s (absent: catalog link)
  std::vector<ProfileTable> tables;
  std::map<std::string, std::string> sources; // parameter -> where it comes from

  double efficiency(const std::string& dtype) const;
  /** Bandwidth share of a memory-bound kernel moving `bytes`, before its kernel's memory efficiency. */
  double memory_ramp(double bytes) const { return memory_half_bytes > 0 ? bytes / (bytes + memory_half_bytes) : 1.0; }
  double memory_efficiency_for(const std::string& key) const;
};

/** Reads a profile. Throws InputError (file:line:col) on malformed or truncated JSON, a wrong schema, missing or
 *  ill-typed fields, non-positive values. */
DeviceProfile load_profile(const std::string& path);
DeviceProfile parse_profile(const std::string& text, const std::string& file);
std::string profile_to_json(const DeviceProfile& p);

/** The profile shipped in calibrate/profiles/ for a catalog device (compiled in), or nullptr. */
const DeviceProfile* builtin_profile(const std::string& device);

} // namespace cs
