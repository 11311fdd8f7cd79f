// calibrate_cuda: runs the CUDA microkernels over a shape sweep and writes a clustersim measurement file.
#include "calibrate/fit/measurements.hpp"
#include "calibrate/kernels/cuda_kernels.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

namespace {

using cs::Measurement;

// The catalog name of a GPU from its reported name (and memory, for the two A100s).
std::string catalog_name(const cs::cuda::DeviceInfo& d)
{
  const std::string& n = d.name;
  if (n.find("H200") != std::string::npos)
    return "h200-sxm";
  if (n.find("H100") != std::string::npos)
    return "h100-sxm5";
  if (n.find("A100") != std::string::npos)
    return d.memory_bytes > 60e9 ? "a100-sxm4-80gb" : "a100-sxm4-40gb";
  if (n.find("V100") != std::string::npos)
    return "v100-sxm2";
  if (n.find("4090") != std::string::npos)
    return "rtx-4090";
  return "";
}

Measurement sample(std::string family, std::map<std::string, std::string> args, const cs::cuda::Sample& s)
{
  Measurement m{std::move(family), std::move(args), s.seconds, s.repeats, (s.max - s.min) / s.seconds};
  return m;
}

std::string num(double v) { return std::to_string(static_cast<long long>(v)); }

// GEMM shapes: squares, shapes on both sides of wave boundaries for this GPU's SM count (M = 2304 = 9 tiles of
// 256, N in steps of 128 tiles, as in NVIDIA's wave-quantisation example), and transformer-like shapes.
std::vector<cs::cuda::GemmShape> gemm_shapes(int sms, bool quick)
{
  std::vector<cs::cuda::GemmShape> s;
  for (int n : quick ? std::vector<int>{1024, 4096, 8192}
                     : std::vector<int>{512, 1024, 1792, 1793, 2048, 3072, 4096, 6144, 8192, 12288, 16384})
    s.push_back({n, n, n});
  for (int wave = 1; wave <= (quick ? 1 : 3); ++wave) {
    int n_edge = 128 * ((wave * sms) / 9); // 9 x (N / 128) tiles fill `wave` waves
    for (int n : {n_edge, n_edge + 128, n_edge + 1})
      s.push_back({2304, n, 4096});
  }
  if (!quick)
    for (auto shape : std::vector<cs::cuda::GemmShape>{{8192, 4096, 4096},
                                                       {8192, 12288, 4096},
                                                       {8192, 4096, 11008},
                                                       {16384, 1024, 8192},
                                                       {1024, 8192, 8192},
                                                       {4096, 50304, 4096},
                                                       {802816, 192, 768},
                                                       {6144, 12288, 12288}})
      s.push_back(shape);
  return s;
}

} // namespace

int main(int argc, char** argv)
{
  CLI::App app{"calibrate_cuda: time the CUDA microkernels and write clustersim measurements"};
  std::string out, device_name;
  bool quick = false;
  int repeats = 20;
  app.add_option("--out", out, "measurement JSON to write")->required();
  app.add_option("--device-name", device_name, "catalog name to record (default: from the GPU's name)");
  app.add_option("--repeats", repeats, "timed repeats per shape (median kept)")->check(CLI::Range(3, 1000));
  app.add_flag("--quick", quick, "fewer shapes");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto info = cs::cuda::device_info();
    cs::Measurements m;
    m.device = device_name.empty() ? catalog_name(info) : device_name;
    if (m.device.empty())
      throw std::runtime_error("GPU '" + info.name + "' is not in the catalog; pass --device-name");
    m.host = {{"gpu", info.name},
              {"gpus", std::to_string(info.gpus)},
              {"sms", std::to_string(info.sms)},
              {"compute_capability", std::to_string(info.major) + "." + std::to_string(info.minor)},
              {"clock_mhz", std::to_string(info.clock_mhz)},
              {"memory_clock_mhz", std::to_string(info.memory_clock_mhz)},
              {"memory_bytes", num(info.memory_bytes)},
              {"driver", info.driver},
              {"cuda_runtime", info.runtime},
              {"cublas", info.cublas},
              {"nccl", info.nccl}};
    std::cerr << "calibrate_cuda: " << info.name << " (" << info.sms << " SMs), writing " << out << "\n";

    const auto shapes = gemm_shapes(info.sms, quick);
    for (const char* dtype : {"fp32", "tf32", "fp16", "bf16", "fp8"}) {
      // cuBLASLt's FP8 kernels need every dimension a multiple of 16 (it reports "not supported" otherwise).
      std::vector<cs::cuda::GemmShape> runnable;
      for (const auto& s : shapes)
        if (std::string(dtype) != "fp8" || (s.m % 16 == 0 && s.n % 16 == 0 && s.k % 16 == 0))
          runnable.push_back(s);
      auto samples = cs::cuda::cublas_gemm(runnable, dtype, repeats);
      for (std::size_t i = 0; i < samples.size(); ++i)
        m.items.push_back(sample("gemm",
                                 {{"m", std::to_string(runnable[i].m)},
                                  {"n", std::to_string(runnable[i].n)},
                                  {"k", std::to_string(runnable[i].k)},
                                  {"dtype", dtype}},
                                 samples[i]));
      std::cerr << "  gemm " << dtype << ": " << samples.size() << " shapes\n";
    }
    for (long long n : quick ? std::vector<long long>{1LL << 26}
                             : std::vector<long long>{1LL << 24, 1LL << 25, 1LL << 26, 1LL << 27, 1LL << 28}) {
      const std::string b = num(4.0 * n);
      m.items.push_back(sample("bandwidth", {{"op", "copy"}, {"bytes_in", b}, {"bytes_out", b}, {"dtype", "fp32"}},
                               cs::cuda::stream_copy(n, repeats)));
      m.items.push_back(sample(
          "bandwidth",
          {{"op", "triad"}, {"bytes_in", num(8.0 * n)}, {"bytes_out", b}, {"flops", num(2.0 * n)}, {"dtype", "fp32"}},
          cs::cuda::stream_triad(n, repeats)));
      for (const char* dtype : {"fp32", "bf16"}) {
        const double e = std::string(dtype) == "fp32" ? 4 : 2;
        m.items.push_back(sample("bandwidth",
                                 {{"op", "gelu"},
                                  {"bytes_in", num(e * n)},
                                  {"bytes_out", num(e * n)},
                                  {"flops", num(8.0 * n)},
                                  {"dtype", dtype}},
                                 cs::cuda::elementwise_gelu(n, dtype, repeats)));
      }
      m.items.push_back(
          sample("memcpy", {{"bytes", b}, {"direction", "d2d"}}, cs::cuda::memcpy_timed(4 * n, "d2d", repeats)));
      m.items.push_back(
          sample("memcpy", {{"bytes", b}, {"direction", "h2d"}}, cs::cuda::memcpy_timed(4 * n, "h2d", 5)));
      m.items.push_back(
          sample("memcpy", {{"bytes", b}, {"direction", "d2h"}}, cs::cuda::memcpy_timed(4 * n, "d2h", 5)));
      if (info.gpus > 1)
        m.items.push_back(
            sample("memcpy", {{"bytes", b}, {"direction", "p2p"}}, cs::cuda::memcpy_timed(4 * n, "p2p", repeats)));
    }
    std::cerr << "  bandwidth kernels and copies done\n";
    for (auto [rows, cols] : quick ? std::vector<std::pair<long long, long long>>{{16384, 4096}}
                                   : std::vector<std::pair<long long, long long>>{
                                         {8192, 1024}, {16384, 4096}, {32768, 8192}, {65536, 4096}, {8192, 32768}}) {
      m.items.push_back(sample("softmax", {{"rows", num(rows)}, {"cols", num(cols)}, {"dtype", "fp32"}},
                               cs::cuda::softmax(rows, cols, repeats)));
      m.items.push_back(sample("layernorm", {{"rows", num(rows)}, {"cols", num(cols)}, {"dtype", "fp32"}},
                               cs::cuda::layernorm(rows, cols, repeats)));
    }

    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(cs::measurements_to_json(m));
    // The hand-written GEMM has known 64 x 64 tiles: its time against the wave count shows quantisation.
    doc["wave_demo"] = nlohmann::ordered_json::array();
    const int tile = cs::cuda::kTiledGemmTile;
    std::vector<cs::cuda::GemmShape> demo;
    for (int w = 1; w <= (quick ? 2 : 4); ++w) {
      int edge = tile * static_cast<int>(std::floor(std::sqrt(double(w) * info.sms))); // ~w waves of square tiles
      for (int n : {edge, edge + 1})
        demo.push_back({n, n, 4096});
    }
    auto tiled = cs::cuda::tiled_gemm(demo, repeats);
    for (std::size_t i = 0; i < demo.size(); ++i) {
      double tiles = std::ceil(double(demo[i].m) / tile) * std::ceil(double(demo[i].n) / tile);
      doc["wave_demo"].push_back({{"m", demo[i].m},
                                  {"n", demo[i].n},
                                  {"k", demo[i].k},
                                  {"tile", tile},
                                  {"tiles", tiles},
                                  {"waves_one_cta_per_sm", std::ceil(tiles / info.sms)},
                                  {"seconds", tiled[i].seconds}});
    }
    doc["collectives"] = nlohmann::ordered_json::array();
    if (info.gpus > 1)
      for (const char* op : {"all_reduce", "all_to_all"})
        for (long long bytes : {1LL << 20, 1LL << 24, 1LL << 28, 1LL << 30}) {
          auto s = cs::cuda::nccl_collective(op, bytes, 10);
          double algbw = bytes / s.seconds / 1e9, n = info.gpus;
          double factor = std::string(op) == "all_reduce" ? 2 * (n - 1) / n : (n - 1) / n;
          doc["collectives"].push_back({{"op", op},
                                        {"bytes", bytes},
                                        {"gpus", info.gpus},
                                        {"seconds", s.seconds},
                                        {"algbw_gbps", algbw},
                                        {"busbw_gbps", algbw * factor}});
        }
    std::ofstream(out + ".tmp") << doc.dump(1) << "\n";
    std::rename((out + ".tmp").c_str(), out.c_str());
    std::cerr << "calibrate_cuda: " << m.items.size() << " measurements written to " << out << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "calibrate_cuda: " << e.what() << "\n";
    return 1;
  }
}
