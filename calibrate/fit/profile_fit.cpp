#include "calibrate/fit/profile_fit.hpp"

#include "base/splitmix.hpp"
#include "calibrate/fit/attention_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

namespace cs {
namespace {

struct Sample {
  Kernel kernel;
  std::string description;
  double seconds;
  bool held_out;
};

bool is_gemm_like(const Kernel& k)
{
  return std::holds_alternative<GemmKernel>(k) || std::holds_alternative<AttentionKernel>(k);
}
bool is_host_copy(const Kernel& k)
{
  const auto* c = std::get_if<MemcpyKernel>(&k);
  return c && c->direction != "d2d";
}

// A candidate GEMM model: tile set, CTAs per SM and each tile's prologue and epilogue in K-steps.
struct GemmShape {
  std::vector<GemmTile> tiles;
  int ctas = 1;
  double k_overhead = 0;
};

// Work a GEMM costs under a tile set, in FLOP-equivalents at full efficiency: the cheapest candidate tile's
// padded FLOPs (K lengthened by the prologue and epilogue) divided by that tile's efficiency (the choice
// GemmWaveModel makes when compute-bound).
double gemm_work(const GemmKernel& g, const GemmShape& shape, int sms)
{
  if (shape.tiles.empty() || sms <= 0)
    return kernel_flops(g);
  double best = std::numeric_limits<double>::infinity();
  for (const auto& t : shape.tiles) {
    WaveCount w = gemm_waves(g.m, g.n, g.batch, t, sms, shape.ctas);
    best = std::min(best,
                    w.waves * w.slots * 2.0 * t.m * t.n * gemm_k_steps(g.k, shape.k_overhead, g.dtype) / t.efficiency);
  }
  return best;
}

struct LinearFit {
  double launch = 0;
  std::map<std::string, double> efficiency;        // per dtype
  std::map<std::string, double> memory_efficiency; // per memory_key()
  double training_error = 0;                       // sum of squared relative errors
};

// Weighted least squares of t = L + sum_d a_d W_d / peak_d + b bytes / bandwidth on the training samples,
// rows divided by the measured time so the fit minimises relative error.
LinearFit solve(const std::vector<Sample>& train, const DeviceSpec& d, const GemmShape& shape)
{
  std::vector<std::string> dtypes;
  for (const auto& s : train)
    if (is_gemm_like(s.kernel))
      dtypes.push_back(kernel_dtype(s.kernel));
  std::sort(dtypes.begin(), dtypes.end());
  dtypes.erase(std::unique(dtypes.begin(), dtypes.end()), dtypes.end());
  std::vector<std::string> memory_keys;
  for (const auto& s : train)
    if (!is_gemm_like(s.kernel) && !is_host_copy(s.kernel))
      memory_keys.push_back(memory_key(s.kernel));
  std::sort(memory_keys.begin(), memory_keys.end());
  memory_keys.erase(std::unique(memory_keys.begin(), memory_keys.end()), memory_keys.end());
  const Eigen::Index first_memory = 1 + static_cast<Eigen::Index>(dtypes.size());
  const Eigen::Index cols = first_memory + static_cast<Eigen::Index>(memory_keys.size());
  std::vector<const Sample*> rows;
  for (const auto& s : train)
    if (!is_host_copy(s.kernel))
      rows.push_back(&s);
  if (static_cast<Eigen::Index>(rows.size()) < cols + 1)
    throw std::invalid_argument("too few training measurements to fit the profile");
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows.size()), cols);
  Eigen::VectorXd b(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Sample& s = *rows[i];
    const auto r = static_cast<Eigen::Index>(i);
    const double w = 1.0 / s.seconds;
    A(r, 0) = w;
    if (is_gemm_like(s.kernel)) {
      std::string dt = kernel_dtype(s.kernel);
      double peak = d.peak(dt);
      if (!(peak > 0))
        throw std::invalid_argument(d.name + " has no " + dt + " peak in the catalog");
      double work = std::holds_alternative<GemmKernel>(s.kernel)
                        ? gemm_work(std::get<GemmKernel>(s.kernel), shape, d.sms)
                        : kernel_flops(s.kernel);
      auto col = 1 + (std::find(dtypes.begin(), dtypes.end(), dt) - dtypes.begin());
      A(r, col) = w * work / peak;
    } else {
      auto col = first_memory +
                 (std::find(memory_keys.begin(), memory_keys.end(), memory_key(s.kernel)) - memory_keys.begin());
      A(r, col) = w * kernel_bytes(s.kernel) / d.memory_bandwidth;
    }
    b(r) = 1.0;
  }
  Eigen::VectorXd x = A.colPivHouseholderQr().solve(b);
  if (x(0) < 0) { // a negative launch time is not physical: refit through the origin
    Eigen::MatrixXd A2 = A.rightCols(cols - 1);
    Eigen::VectorXd x2 = A2.colPivHouseholderQr().solve(b);
    x.setZero();
    x.tail(cols - 1) = x2;
  }
  LinearFit f;
  f.launch = x(0);
  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    double a = x(1 + static_cast<Eigen::Index>(i));
    if (!std::isfinite(a) || a == 0)
      throw std::invalid_argument(fmt::format("the measurements do not determine the {} efficiency (too few distinct "
                                              "shapes, or every time the same)",
                                              dtypes[i]));
    if (!(a >= 1)) // faster than the datasheet peak (or negative): the measurements contradict the catalog
      throw std::invalid_argument(fmt::format("fit gave an efficiency of {:.3g} for {}", 1.0 / a, dtypes[i]));
    f.efficiency[dtypes[i]] = 1.0 / a;
  }
  for (std::size_t i = 0; i < memory_keys.size(); ++i) {
    double a = x(first_memory + static_cast<Eigen::Index>(i));
    if (!std::isfinite(a) || a == 0)
      throw std::invalid_argument(fmt::format("the measurements do not determine the memory efficiency of {} (too "
                                              "few distinct sizes, or every time the same)",
                                              memory_keys[i]));
    if (!(a >= 1))
      throw std::invalid_argument(
          fmt::format("fit gave a memory efficiency of {:.3g} for {}", 1.0 / a, memory_keys[i]));
    f.memory_efficiency[memory_keys[i]] = 1.0 / a;
  }
  f.training_error = (A * x - b).squaredNorm();
  return f;
}

std::vector<std::vector<GemmTile>> tile_options()
{
  std::vector<std::vector<GemmTile>> options;
  for (auto [m, n] : std::vector<std::pair<int, int>>{{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 64}})
    options.push_back({GemmTile{m, n, 1.0, ""}});
  // The shipped candidate set (smaller tiles less efficient), as cuBLAS chooses among tiles per shape.
  options.push_back({GemmTile{256, 128, 1.0, ""}, GemmTile{128, 256, 1.0, ""}, GemmTile{128, 128, 0.95, ""},
                     GemmTile{128, 64, 0.85, ""}, GemmTile{64, 64, 0.7, ""}});
  return options;
}

// A platform-independent hash of a kernel's description (FNV-1a, then SplitMix64 to mix it).
std::uint64_t description_hash(const std::string& text)
{
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ULL;
  return splitmix64(h);
}

// A base profile's sources for parameters the fit replaces would name the old values' origin: dropped, or, where the
// fit replaces only some entries (a dtype, a kernel, a copy direction), kept as the source of the entries left.
void forget_sources(DeviceProfile& p, std::initializer_list<const char*> keys, bool partly = false)
{
  for (const char* k : keys) {
    auto it = p.sources.find(k);
    if (it == p.sources.end())
      continue;
    if (partly)
      p.sources[std::string(k) + " (entries not fitted)"] = it->second;
    p.sources.erase(k);
  }
}

// The attention curves, FlashAttention-2's and cuDNN's, when their kernels were measured.
void fit_attention(FitResult& result, const std::vector<AttentionSample>& flash,
                   const std::vector<AttentionSample>& cudnn, const DeviceSpec& device)
{
  DeviceProfile& p = result.profile;
  std::vector<std::string> fitted;
  if (!flash.empty()) {
    p.attention = fit_attention_curve(flash, device, p.launch_overhead);
    fitted.push_back(fmt::format("FlashAttention-2 from {} kernels", flash.size()));
  }
  if (!cudnn.empty()) {
    if (!(p.attention.forward > 0))
      throw std::invalid_argument("cuDNN attention was measured but FlashAttention-2 was not, and the base profile "
                                  "has no curve for it: cuDNN's curve is used only beside one");
    p.attention_cudnn = fit_attention_curve(cudnn, device, p.launch_overhead);
    fitted.push_back(fmt::format("cuDNN from {} kernels", cudnn.size()));
  }
  if (fitted.empty())
    return;
  forget_sources(p, {"attention"});
  p.sources["attention"] = "fitted by clustersim fit to the measurements named under 'measurements'";
  result.attention_choice = fmt::format("attention curves: {}", fmt::join(fitted, ", "));
}

// Sources, host facts and every measurement's residual under the fitted profile.
void finish(FitResult& result, const std::vector<Sample>& samples, const DeviceSpec& device,
            const Measurements& measurements, const FitOptions& options)
{
  DeviceProfile& p = result.profile;
  if (!result.attention_choice.empty())
    p.sources["fit.attention"] = result.attention_choice;
  if (options.base)
    p.sources["fit.base"] = fmt::format("parameters the measurements do not determine are kept from the {} profile "
                                        "of {}",
                                        options.base->origin, options.base->device);
  for (const auto& [k, v] : measurements.host)
    p.sources["host." + k] = v;
  auto model = make_cost_model(device, p);
  for (const auto& s : samples) {
    CostBreakdown b = model->predict(s.kernel);
    result.residuals.push_back(Residual{s.description, kernel_family(s.kernel), b.model, s.seconds, b.total,
                                        (b.total - s.seconds) / s.seconds, s.held_out});
  }
}

void fit_attention_only(FitResult& result, const std::vector<Sample>& samples,
                        const std::vector<AttentionSample>& flash, const std::vector<AttentionSample>& cudnn,
                        const DeviceSpec& device, const Measurements& measurements, const FitOptions& options)
{
  fit_attention(result, flash, cudnn, device);
  if (result.attention_choice.empty())
    throw std::invalid_argument("no measurements to fit");
  result.profile.sources["fit"] = fmt::format("clustersim fit: attention curves only, on {} of {} measurements",
                                              flash.size() + cudnn.size(), samples.size());
  finish(result, samples, device, measurements, options);
}

} // namespace

std::vector<Residual> evaluate(const KernelCostModel& model, const Measurements& measurements)
{
  std::vector<Residual> out;
  for (const auto& m : measurements.items) {
    Kernel k = m.kernel();
    CostBreakdown b = model.predict(k);
    out.push_back(Residual{describe_kernel(k), kernel_family(k), b.model, m.seconds, b.total,
                           (b.total - m.seconds) / m.seconds, false});
  }
  return out;
}

ErrorStats error_stats(const std::vector<Residual>& residuals)
{
  ErrorStats s;
  std::vector<double> e, signed_e;
  for (const auto& r : residuals) {
    e.push_back(std::abs(r.relative_error));
    signed_e.push_back(r.relative_error);
  }
  s.count = static_cast<int>(e.size());
  if (e.empty())
    return s;
  std::sort(e.begin(), e.end());
  std::sort(signed_e.begin(), signed_e.end());
  auto at = [](const std::vector<double>& v, double q) {
    double pos = q * (v.size() - 1);
    std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (pos - lo) * (v[hi] - v[lo]);
  };
  s.median = at(e, 0.5);
  s.p90 = at(e, 0.9);
  s.bias = at(signed_e, 0.5);
  return s;
}

FitResult fit_profile(const Measurements& measurements, const DeviceSpec& device, const FitOptions& options)
{
  if (options.holdout_every < 2)
    throw std::invalid_argument("holdout_every must be at least 2");
  // Deterministic split, per kernel family so each is scored: every n-th (from the middle of the first n) in the
  // order of a hash of the description. (Every n-th by description itself aligned with sweeps that alternate a
  // flag: with n = 4 it held out every non-causal attention kernel.)
  std::vector<Sample> samples;
  for (const auto& m : measurements.items) {
    Kernel k = m.kernel();
    samples.push_back(Sample{k, describe_kernel(k), m.seconds, false});
  }
  std::stable_sort(samples.begin(), samples.end(),
                   [](const Sample& a, const Sample& b) { return a.description < b.description; });
  std::vector<std::tuple<std::string, std::uint64_t, std::size_t>> order;
  for (std::size_t i = 0; i < samples.size(); ++i)
    order.emplace_back(kernel_family(samples[i].kernel), description_hash(samples[i].description), i);
  std::sort(order.begin(), order.end());
  const auto every = static_cast<std::size_t>(options.holdout_every);
  for (std::size_t i = 0, rank = 0; i < order.size(); ++i, ++rank) {
    if (i > 0 && std::get<0>(order[i]) != std::get<0>(order[i - 1]))
      rank = 0;
    samples[std::get<2>(order[i])].held_out = rank % every == (every - 1) / 2;
  }
  std::vector<Sample> train;
  for (const auto& s : samples)
    if (!s.held_out)
      train.push_back(s);

  // Attention kernels have a curve of their own (the sequence ramp), fitted apart from the linear model.
  std::vector<AttentionSample> flash, cudnn;
  {
    std::vector<Sample> rest;
    for (const auto& s : train)
      if (const auto* a = std::get_if<AttentionKernel>(&s.kernel); a && !a->triton)
        (a->cudnn ? cudnn : flash).push_back(AttentionSample{*a, s.seconds});
      else
        rest.push_back(s);
    train = std::move(rest);
  }
  FitResult result;
  DeviceProfile& p = result.profile;
  if (options.base)
    p = *options.base;
  p.device = device.name;
  p.origin = "fit";
  if (train.empty() && options.base) { // attention alone, on top of a profile that has the rest
    fit_attention_only(result, samples, flash, cudnn, device, measurements, options);
    return result;
  }
  const bool waves = device.sms > 0 && std::any_of(train.begin(), train.end(), [](const Sample& s) {
                       return std::holds_alternative<GemmKernel>(s.kernel);
                     });
  LinearFit best;
  best.training_error = std::numeric_limits<double>::infinity();
  GemmShape best_shape;
  std::vector<GemmShape> grid{GemmShape{}};
  // Tile prologue and epilogue in K-steps of a 16-bit main loop: none, up to four 64-deep stages of a multistage one.
  if (waves)
    for (const auto& tiles : tile_options())
      for (int ctas : {1, 2})
        for (double k_overhead : {0.0, 32.0, 64.0, 128.0, 192.0, 256.0})
          grid.push_back(GemmShape{tiles, ctas, k_overhead});
  std::string first_error;
  for (const auto& shape : grid) {
    LinearFit f;
    try {
      f = solve(train, device, shape);
    } catch (const std::invalid_argument& e) {
      if (first_error.empty())
        first_error = e.what();
      continue;
    }
    if (f.training_error < best.training_error) {
      best = f;
      best_shape = shape;
    }
  }
  if (!std::isfinite(best.training_error))
    throw std::invalid_argument(first_error);
  const std::vector<GemmTile>& best_tiles = best_shape.tiles;
  const int best_ctas = best_shape.ctas;
  constexpr const char* kFitted = "fitted by clustersim fit to the measurements named under 'measurements'";
  forget_sources(p, {"launch_overhead_s"});
  p.launch_overhead = best.launch;
  p.sources["launch_overhead_s"] = kFitted;
  if (!best.efficiency.empty())
    forget_sources(p, {"compute_efficiency"}, options.base != nullptr);
  for (const auto& [dtype, e] : best.efficiency) // a base's other dtypes (and its default) stay
    p.compute_efficiency[dtype] = e;
  if (!best.efficiency.empty())
    p.sources["compute_efficiency"] = kFitted;
  if (p.compute_efficiency.empty())
    p.compute_efficiency["default"] = 1.0;
  // The most common memory kernel's efficiency is the default; every fitted kernel keeps its own.
  if (!best.memory_efficiency.empty()) {
    forget_sources(p, {"memory_efficiency"}, options.base != nullptr);
    for (const auto& [key, e] : best.memory_efficiency)
      p.memory_efficiency_by_kernel[key] = e;
    p.sources["memory_efficiency"] = kFitted;
    auto triad = best.memory_efficiency.find("bandwidth/triad");
    p.memory_efficiency =
        triad != best.memory_efficiency.end() ? triad->second : best.memory_efficiency.begin()->second;
  }
  if (waves || !options.base) {
    forget_sources(p, {"gemm"});
    if (waves)
      p.sources["gemm"] = kFitted;
    p.gemm_tiles = best_tiles;
    p.ctas_per_sm = best_ctas;
    p.gemm_k_overhead = best_shape.k_overhead;
  }
  result.gemm_choice = best_tiles.empty()
                           ? "no tile quantisation"
                           : fmt::format("{} tile candidate{}, {} CTA{} per SM, tile prologue and epilogue {} K-steps",
                                         best_tiles.size(), best_tiles.size() == 1 ? "" : "s", best_ctas,
                                         best_ctas == 1 ? "" : "s", best_shape.k_overhead);
  // Host and peer copies: bandwidth from a fit of t = c + bytes / bw per direction.
  std::map<std::string, std::vector<const Sample*>> copies;
  for (const auto& s : train)
    if (is_host_copy(s.kernel))
      copies[std::get<MemcpyKernel>(s.kernel).direction].push_back(&s);
  for (const auto& [dir, list] : copies) {
    if (list.size() < 2)
      continue;
    Eigen::MatrixXd A(static_cast<Eigen::Index>(list.size()), 2);
    Eigen::VectorXd b(static_cast<Eigen::Index>(list.size()));
    for (std::size_t i = 0; i < list.size(); ++i) {
      double w = 1.0 / list[i]->seconds;
      A(static_cast<Eigen::Index>(i), 0) = w;
      A(static_cast<Eigen::Index>(i), 1) = w * std::get<MemcpyKernel>(list[i]->kernel).bytes;
      b(static_cast<Eigen::Index>(i)) = 1.0;
    }
    Eigen::VectorXd x = A.colPivHouseholderQr().solve(b);
    if (x(1) > 0) {
      forget_sources(p, {"copy_bandwidth"}, options.base != nullptr);
      p.copy_bandwidth[dir] = 1.0 / x(1);
      p.sources["copy_bandwidth"] = kFitted;
    }
  }
  fit_attention(result, flash, cudnn, device);
  if (options.with_tables) {
    std::map<std::pair<std::string, std::string>, ProfileTable> tables;
    for (const auto& s : train) {
      const auto* copy = std::get_if<MemcpyKernel>(&s.kernel);
      std::string key = copy ? copy->direction : kernel_dtype(s.kernel);
      auto& t = tables[{kernel_family(s.kernel), key}];
      t.family = kernel_family(s.kernel);
      t.dtype = key;
      t.shapes.push_back(kernel_shape(s.kernel));
      t.seconds.push_back(s.seconds);
    }
    for (auto& [key, t] : tables)
      p.tables.push_back(std::move(t));
  }
  const auto held_out =
      std::count_if(samples.begin(), samples.end(), [](const Sample& s) { return s.held_out; });
  p.sources["fit"] = fmt::format("clustersim fit: weighted least squares on {} of {} measurements ({} held out, {} "
                                 "attention kernels fitted apart); {}",
                                 train.size(), samples.size(), held_out, flash.size() + cudnn.size(),
                                 result.gemm_choice);
  finish(result, samples, device, measurements, options);
  return result;
}

} // namespace cs
