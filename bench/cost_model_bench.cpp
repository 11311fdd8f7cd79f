// Cost-model throughput: predictions per second of the standard stack, without and with profiled tables.
#include "models/cost/kernel_cost_model.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

int main(int argc, char** argv)
{
  const int n = argc > 1 ? std::stoi(argv[1]) : 1000000;
  const auto& device = *cs::DeviceCatalog::builtin().find("h100-sxm5");
  cs::DeviceProfile with_tables = *cs::builtin_profile("h100-sxm5");
  // A 6 x 6 x 6 GEMM table, as a measured profile would carry.
  cs::ProfileTable table{"gemm", "bf16", {}, {}};
  for (double m = 512; m <= 16384; m *= 2)
    for (double nn = 512; nn <= 16384; nn *= 2)
      for (double k = 512; k <= 16384; k *= 2) {
        table.shapes.push_back({m, nn, k});
        table.seconds.push_back(2 * m * nn * k / 700e12 + 3e-6);
      }
  with_tables.tables.push_back(table);

  std::mt19937 rng(1);
  std::uniform_real_distribution<double> log_size(std::log(512.0), std::log(16384.0));
  std::vector<cs::Kernel> kernels;
  for (int i = 0; i < 4096; ++i) {
    switch (i % 4) {
    case 0:
    case 1:
      kernels.push_back(
          cs::GemmKernel{std::exp(log_size(rng)), std::exp(log_size(rng)), std::exp(log_size(rng)), 1, "bf16"});
      break;
    case 2:
      kernels.push_back(cs::MemcpyKernel{std::exp(log_size(rng)) * 4096, "d2d"});
      break;
    default:
      kernels.push_back(cs::AttentionKernel{4, 32, 8, 4096, 4096, 128, true, "bf16"});
    }
  }
  std::printf("%-36s %14s\n", "model stack", "predictions/s");
  for (auto [label, profile] :
       {std::pair{"datasheet profile (waves, roofline)", cs::builtin_profile("h100-sxm5")},
        std::pair{"with a 216-point GEMM table", static_cast<const cs::DeviceProfile*>(&with_tables)}}) {
    auto model = cs::make_cost_model(device, *profile);
    double sink = 0;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i)
      sink += model->predict(kernels[i % kernels.size()]).total;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-36s %14.0f   (checksum %.6g)\n", label, n / s, sink);
  }
  return 0;
}
