#include "calibrate/cpu/cpu_microkernels.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <list>
#include <random>

namespace cs {
namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double best = 0; // fastest sample
  double median = 0;
  double spread = 0; // (slowest - fastest) / median
};

// Times every kernel of `kernels` `rounds` times, round-robin, so that all of them see the same quiet and busy
// spells of a shared machine. A sample repeats its kernel until it lasts at least 2 ms (timer resolution and
// scheduling hiccups stay small against it); round 0 warms up and sizes the repeats.
std::vector<Timing> time_round_robin(const std::vector<std::function<void()>>& kernels, int rounds)
{
  std::vector<int> inner(kernels.size(), 1);
  std::vector<std::vector<double>> samples(kernels.size());
  for (int round = 0; round <= rounds; ++round)
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      auto start = Clock::now();
      for (int j = 0; j < inner[k]; ++j)
        kernels[k]();
      double t = std::chrono::duration<double>(Clock::now() - start).count() / inner[k];
      if (round == 0)
        inner[k] = std::max(1, static_cast<int>(std::ceil(2e-3 / std::max(t, 1e-9))));
      else
        samples[k].push_back(t);
    }
  std::vector<Timing> out;
  for (auto& t : samples) {
    std::sort(t.begin(), t.end());
    out.push_back(Timing{t.front(), t[t.size() / 2], (t.back() - t.front()) / t[t.size() / 2]});
  }
  return out;
}

// On a shared virtual machine the slower samples measure the neighbours, not the kernel: like STREAM, keep the
// fastest sample as the kernel's time (the median and spread are recorded alongside).
Measurement measured(std::string family, std::map<std::string, std::string> args, const Timing& t, int repeats)
{
  Measurement m{std::move(family), std::move(args), t.best, repeats, t.spread};
  m.median = t.median;
  return m;
}

std::string cpu_model()
{
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown";
}

// Keeps the optimiser from dropping work whose result is never read.
volatile double sink = 0;

template <class Scalar> struct GemmCase {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  Matrix a, b, c;
};

// Adds one GEMM kernel per shape for Scalar; the matrices live in `cases` (stable addresses: a std::list).
template <class Scalar>
void add_gemms(std::vector<std::function<void()>>& kernels, std::vector<Measurement>& labels,
               std::list<GemmCase<Scalar>>& cases, const char* dtype, const std::vector<std::array<int, 3>>& shapes,
               std::mt19937& rng)
{
  using Matrix = typename GemmCase<Scalar>::Matrix;
  std::uniform_real_distribution<double> dist(-1, 1);
  for (auto [m, n, k] : shapes) {
    auto& g = cases.emplace_back();
    g.a = Matrix::NullaryExpr(m, k, [&] { return Scalar(dist(rng)); });
    g.b = Matrix::NullaryExpr(k, n, [&] { return Scalar(dist(rng)); });
    g.c.resize(m, n);
    kernels.push_back([&g] {
      g.c.noalias() = g.a * g.b;
      sink = sink + double(g.c(0, 0));
    });
    labels.push_back(
        Measurement{"gemm",
                    {{"m", std::to_string(m)}, {"n", std::to_string(n)}, {"k", std::to_string(k)}, {"dtype", dtype}},
                    0,
                    0,
                    0});
  }
}

} // namespace

Measurements run_cpu_calibration(const CpuCalibrationOptions& o)
{
  Measurements out;
  out.device = "cpu-node";
  out.host["model"] = cpu_model();
  out.host["threads"] = "1";
  out.host["eigen"] = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                      std::to_string(EIGEN_MINOR_VERSION);
  out.host["compiler"] = __VERSION__;
  std::mt19937 rng(o.seed);
  const int repeats = o.quick ? 3 : o.repeats;

  // GEMM: squares and skinny shapes, in and out of cache.
  std::vector<std::array<int, 3>> shapes;
  const std::vector<int> sizes =
      o.quick ? std::vector<int>{64, 128, 256} : std::vector<int>{48, 64, 96, 128, 192, 256, 320, 384, 512};
  for (int s : sizes)
    shapes.push_back({s, s, s});
  if (!o.quick)
    for (auto shape : std::vector<std::array<int, 3>>{{512, 128, 256},
                                                      {128, 512, 256},
                                                      {256, 256, 64},
                                                      {1024, 64, 128},
                                                      {64, 1024, 256},
                                                      {384, 192, 512},
                                                      {256, 512, 128},
                                                      {768, 256, 256}})
      shapes.push_back(shape);
  {
    std::vector<std::function<void()>> kernels;
    std::vector<Measurement> labels;
    std::list<GemmCase<float>> singles;
    std::list<GemmCase<double>> doubles;
    add_gemms(kernels, labels, singles, "fp32", shapes, rng);
    add_gemms(kernels, labels, doubles, "fp64", shapes, rng);
    auto timings = time_round_robin(kernels, repeats);
    for (std::size_t i = 0; i < labels.size(); ++i)
      out.items.push_back(measured(labels[i].family, labels[i].args, timings[i], repeats));
  }

  // STREAM copy and triad and memcpy on doubles, beyond the last-level cache (64 MiB to 160 MiB per array; the
  // development machine's L3 is 32 MiB) and below the size where glibc's memcpy switches to non-temporal
  // stores (seen here between 160 and 192 MiB), so that one bandwidth per kernel describes each of them.
  const std::vector<std::size_t> lengths =
      o.quick ? std::vector<std::size_t>{1u << 23, 3u << 22}
              : std::vector<std::size_t>{1u << 23,  9u << 20, 5u << 21,  11u << 20, 3u << 22,
                                         13u << 20, 7u << 21, 15u << 20, 1u << 24,  5u << 22};
  const std::size_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<double> a(longest), b(longest), c(longest);
  std::uniform_real_distribution<double> fill(0, 1);
  for (std::size_t i = 0; i < longest; ++i) {
    a[i] = 0;
    b[i] = fill(rng);
    c[i] = fill(rng);
  }
  std::vector<std::function<void()>> kernels;
  for (std::size_t n : lengths) {
    kernels.push_back([&, n] {
      for (std::size_t i = 0; i < n; ++i)
        a[i] = b[i];
      sink = sink + a[n / 2];
    });
    kernels.push_back([&, n] {
      for (std::size_t i = 0; i < n; ++i)
        a[i] = b[i] + 3.0 * c[i];
      sink = sink + a[n / 3];
    });
    kernels.push_back([&, n] {
      std::memcpy(a.data(), c.data(), n * sizeof(double));
      sink = sink + a[n / 4];
    });
  }
  const int rounds = o.quick ? 3 : 2 * repeats;
  auto timings = time_round_robin(kernels, rounds);
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    const std::size_t n = lengths[s];
    const std::string bytes = std::to_string(8 * n);
    out.items.push_back(measured("bandwidth",
                                 {{"op", "copy"}, {"bytes_in", bytes}, {"bytes_out", bytes}, {"dtype", "fp64"}},
                                 timings[3 * s], rounds));
    out.items.push_back(measured("bandwidth",
                                 {{"op", "triad"},
                                  {"bytes_in", std::to_string(16 * n)},
                                  {"bytes_out", bytes},
                                  {"flops", std::to_string(2 * n)},
                                  {"dtype", "fp64"}},
                                 timings[3 * s + 1], rounds));
    out.items.push_back(measured("memcpy", {{"bytes", bytes}, {"direction", "d2d"}}, timings[3 * s + 2], rounds));
  }
  return out;
}

} // namespace cs
