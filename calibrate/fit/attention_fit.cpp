#include "calibrate/fit/attention_fit.hpp"

#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>

namespace cs {
namespace {

struct PassFit {
  double efficiency = 0, half_seq = 0, error = std::numeric_limits<double>::infinity();
};

// For one pass, given the causal scales and the head-size half-point: the half-way sequence by grid search and the
// asymptote in closed form. With a_i the time at share 1, t_i ~ L + a_i x (x = 1 / E), and the relative error
// sum((L + a_i x - t_i) / t_i)^2 = sum(r_i x - y_i)^2 (r_i = a_i / t_i, y_i = (t_i - L) / t_i) is least at
// x = sum(r_i y_i) / sum(r_i^2).
PassFit fit_pass(const std::vector<AttentionSample>& samples, bool backward, const DeviceSpec& device, double launch,
                 const AttentionEfficiency& shape)
{
  static const double kHalfSeqs[] = {0, 16, 32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 512, 768, 1024, 1536};
  constexpr double kProbe = 1e-3; // a small asymptote, so the curve's cap at 1 never bites while fitting
  PassFit best;
  for (double half : kHalfSeqs) {
    AttentionEfficiency probe = shape;
    (backward ? probe.backward : probe.forward) = kProbe;
    (backward ? probe.backward_half_seq : probe.forward_half_seq) = half;
    double sum_ry = 0, sum_r2 = 0;
    std::vector<std::pair<double, double>> ry;
    for (const auto& s : samples) {
      if (s.kernel.backward != backward)
        continue;
      const double share = probe.share(backward, s.kernel.causal, s.kernel.seq_kv, s.kernel.head_dim) / kProbe;
      const double a = kernel_flops(s.kernel) / (device.peak(s.kernel.dtype) * share);
      const double r = a / s.seconds, y = (s.seconds - launch) / s.seconds;
      ry.emplace_back(r, y);
      sum_ry += r * y;
      sum_r2 += r * r;
    }
    if (ry.empty() || !(sum_r2 > 0) || !(sum_ry > 0))
      continue;
    const double x = sum_ry / sum_r2;
    double error = 0;
    for (auto [r, y] : ry)
      error += (r * x - y) * (r * x - y);
    if (error < best.error)
      best = PassFit{1.0 / x, half, error};
  }
  return best;
}

bool has(const std::vector<AttentionSample>& samples, bool (*pred)(const AttentionSample&))
{
  for (const auto& s : samples)
    if (pred(s))
      return true;
  return false;
}

} // namespace

AttentionEfficiency fit_attention_curve(const std::vector<AttentionSample>& samples, const DeviceSpec& device,
                                        double launch_overhead)
{
  if (!has(samples, [](const AttentionSample& s) { return s.kernel.backward; }) ||
      !has(samples, [](const AttentionSample& s) { return !s.kernel.backward; }))
    throw std::invalid_argument("attention measurements need both passes (forward and backward) to fit a curve");
  for (const auto& s : samples)
    if (!(device.peak(s.kernel.dtype) > 0))
      throw std::invalid_argument(device.name + " has no " + s.kernel.dtype + " peak in the catalog");
  const bool causal = has(samples, [](const AttentionSample& s) { return s.kernel.causal; });
  bool several_heads = false;
  for (const auto& s : samples)
    several_heads = several_heads || s.kernel.head_dim != samples.front().kernel.head_dim;
  std::vector<double> causal_scales{1.0}, causal_halves{1.0}, head_halves{0.0};
  if (causal) {
    causal_scales.clear();
    for (int i = 0; i <= 20; ++i)
      causal_scales.push_back(0.70 + 0.02 * i);
    causal_halves = {1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6};
  }
  if (several_heads)
    head_halves = {0, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256};
  AttentionEfficiency best;
  double best_error = std::numeric_limits<double>::infinity();
  for (double c : causal_scales)
    for (double ch : causal_halves)
      for (double h0 : head_halves) {
        AttentionEfficiency shape;
        shape.causal_scale = c;
        shape.causal_half_seq_scale = ch;
        shape.head_dim_half = h0;
        PassFit f = fit_pass(samples, false, device, launch_overhead, shape);
        PassFit b = fit_pass(samples, true, device, launch_overhead, shape);
        if (f.error + b.error < best_error) {
          best_error = f.error + b.error;
          best = shape;
          best.forward = f.efficiency;
          best.forward_half_seq = f.half_seq;
          best.backward = b.efficiency;
          best.backward_half_seq = b.half_seq;
        }
      }
  // Causal masking scales both asymptotes: a causal share above 1 would be faster than the peak.
  if (!(best.forward * best.causal_scale <= 1 && best.backward * best.causal_scale <= 1 && best.forward <= 1 &&
        best.backward <= 1))
    throw std::invalid_argument(fmt::format("attention fit gave a share of peak above 1 (forward {:.3g}, backward "
                                            "{:.3g}): the measurements contradict the catalog's peak",
                                            best.forward, best.backward));
  return best;
}

} // namespace cs
