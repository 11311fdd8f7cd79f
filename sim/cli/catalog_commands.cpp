// `clustersim list policies|kinds|devices|traces|workloads|metrics` and `clustersim trace FILE`.
#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "base/registry.hpp"
#include "base/units.hpp"
#include "core/metric.hpp"
#include "core/workload.hpp"
#include "models/devices/device_catalog.hpp"
#include "models/moe/token_dispatcher.hpp"
#include "models/spark/spark_cache.hpp"
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/framework.hpp"
#include "models/transformer/mlp_kind.hpp"
#include "models/transformer/userbuffers_configs.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/progress_reporter.hpp"
#include "traces/trace_format.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>

namespace cs {
namespace {

void list_devices()
{
  for (const auto& [name, d] : DeviceCatalog::builtin().all()) {
    if (d.kind == "gpu") {
      // The dtypes it has units for, widest first, with their dense peaks (a V100 has no bf16 or fp8).
      std::string peaks;
      for (const char* dtype : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"})
        if (d.peak(dtype) > 0)
          peaks += fmt::format("{}{} {:.1f}", peaks.empty() ? "" : ", ", dtype, d.peak(dtype) / 1e12);
      std::cout << fmt::format("{:<16} {:<34} {:>6.0f} GB/s  {}  {} SMs  TFLOP/s: {}\n", name, d.display_name,
                               d.memory_bandwidth / 1e9, units::format_bytes(d.memory_bytes), d.sms, peaks);
    } else
      std::cout << fmt::format("{:<16} {:<34} {} cores x {:.1f} GFLOP/s  {:>6.1f} GB/s  {}\n", name, d.display_name,
                               d.cores, d.core_speed / 1e9, d.memory_bandwidth / 1e9,
                               units::format_bytes(d.memory_bytes));
  }
}

// One registry of a transformer's pieces, under the scenario key that chooses among them.
template <typename Kind> void list_kind(const char* heading, bool first)
{
  const auto& kinds = Registry<Kind>::instance();
  std::cout << (first ? "" : "\n") << heading << ":\n";
  for (const auto& name : kinds.names())
    std::cout << fmt::format("  {:<22} {}\n", name, kinds.description(name));
}

// The built-in training stacks, and Transformer Engine's userbuffers configurations by name (each overlap's method and
// SMs, "+" where the GEMM is launched without them; docs/frameworks.md).
void list_frameworks()
{
  std::cout << "\nworkload.framework:\n";
  for (const auto& p : builtin_frameworks())
    std::cout << fmt::format("  {:<22} {}\n", p.name, p.description);
  std::cout << "\nworkload.framework.tp_overlap (named userbuffers configurations):\n";
  for (const auto& [name, layers] : userbuffers_configs()) {
    std::string text;
    for (const char* layer : {"proj_fprop", "fc2_fprop", "qkv_dgrad", "qkv_wgrad", "fc1_dgrad", "fc1_wgrad"}) {
      const UbOverlap& o = layers.at(layer);
      text += fmt::format("{}{} {} {}{}", text.empty() ? "" : ", ", layer,
                          o.method == "ring_exchange" ? "ring" : o.method, o.num_sm, o.set_sm_margin ? "+" : "");
    }
    std::cout << fmt::format("  {}\n      {}\n", name, text);
  }
}

// The pieces a training model is built from, each a registered file (docs/architecture.md, "Seams").
void list_kinds()
{
  list_kind<AttentionKind>("attention kinds (a block workload.model.<kind>: {...}; gqa without one)", true);
  list_kind<MlpKind>("workload.model.mlp", false);
  list_kind<Fp8Recipe>("workload.model.fp8", false);
  list_kind<TokenDispatcher>("workload.model.moe.dispatcher", false);
  list_frameworks();
}

int list(const std::string& what)
{
  if (what == "policies") {
    std::string domain;
    for (const auto& p : all_policies()) {
      if (p.domain != domain)
        std::cout << (domain.empty() ? "" : "\n") << p.domain << ":\n";
      domain = p.domain;
      std::cout << fmt::format("  {:<22} {}\n", p.name, p.description);
    }
    // Spark's evictions are a parameter of either cache layout, not a domain of their own.
    const auto& evictions = Registry<CacheEviction>::instance();
    std::cout << "\nspark_cache eviction (policies.spark_cache: {name: ..., eviction: ...}):\n";
    for (const auto& name : evictions.names())
      std::cout << fmt::format("  {:<22} {}\n", name, evictions.description(name));
  } else if (what == "kinds") {
    list_kinds();
  } else if (what == "workloads") {
    const auto& kinds = Registry<Workload>::instance();
    for (const auto& name : kinds.names())
      std::cout << fmt::format("{:<22} {}\n", name, kinds.description(name));
  } else if (what == "traces") {
    for (const auto& f : trace_formats_registered())
      std::cout << fmt::format("{:<9} {} (replayed by {})\n", f.name, f.description, f.feeds);
    std::cout << "Check a file with: clustersim trace FILE [--format FORMAT]\n";
  } else if (what == "metrics") {
    for (const Metric* m : metric_catalog())
      std::cout << fmt::format("{:<30} {:<10} {}\n", m->name, unit_symbol(m->unit), m->description);
  } else {
    list_devices();
  }
  return 0;
}

int trace(const std::string& given, const std::string& path)
{
  const std::string format = given.empty() ? detect_any_trace_format(path) : given;
  std::string summary;
  {
    ProgressReporter progress("clustersim trace " + path, true); // large traces take seconds to read
    summary = find_trace_format(format)->summarise(path);
  }
  std::cout << summary;
  return 0;
}

} // namespace

CLI::Validator declared_metric()
{
  return CLI::Validator(
      [](const std::string& name) {
        return find_metric(name) ? std::string()
                                 : "unknown metric '" + name + "' (clustersim list metrics shows every one)";
      },
      "METRIC");
}

std::vector<Command> add_catalog_commands(CLI::App& app)
{
  auto what = std::make_shared<std::string>();
  auto* lister =
      app.add_subcommand("list", "list registered policies, a model's pieces (attention, MLP, FP8 recipe, token "
                                 "dispatcher, framework, userbuffers configuration) and workload kinds, catalog "
                                 "devices, trace formats or the metrics runs report");
  lister->add_option("what", *what, "policies | kinds | workloads | devices | traces | metrics")
      ->required()
      ->check(CLI::IsMember({"policies", "kinds", "workloads", "devices", "traces", "metrics"}));
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>();
  auto* tracer = app.add_subcommand(
      "trace", "read a trace (MapReduce, Spark, GPU-cluster jobs, PyTorch profiler, Chakra) and report "
               "what was read and skipped");
  tracer->add_option("file", *path, "trace file")->required();
  std::string names;
  for (const auto& n : trace_format_names())
    names += (names.empty() ? "" : " | ") + n;
  tracer->add_option("--format", *format, names + " (default: detected from the file)")
      ->check(CLI::IsMember(trace_format_names()));
  return {{lister, [what] { return list(*what); }}, {tracer, [format, path] { return trace(*format, *path); }}};
}

} // namespace cs
