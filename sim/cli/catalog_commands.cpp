// `clustersim list policies|devices|traces|workloads` and `clustersim trace FILE`.
#include "base/registry.hpp"
#include "base/units.hpp"
#include "core/workload.hpp"
#include "models/devices/device_catalog.hpp"
#include "sim/cli/command.hpp"
#include "traces/trace_job.hpp"

#include <fmt/format.h>
#include <iostream>

namespace cs {
namespace {

void list_devices()
{
  for (const auto& [name, d] : DeviceCatalog::builtin().all()) {
    if (d.kind == "gpu")
      std::cout << fmt::format("{:<16} {:<34} bf16 {:>7.1f} TFLOP/s  {:>6.0f} GB/s  {}  {} SMs\n", name, d.display_name,
                               d.peak("bf16") / 1e12, d.memory_bandwidth / 1e9, units::format_bytes(d.memory_bytes),
                               d.sms);
    else
      std::cout << fmt::format("{:<16} {:<34} {} cores x {:.1f} GFLOP/s  {:>6.1f} GB/s  {}\n", name, d.display_name,
                               d.cores, d.core_speed / 1e9, d.memory_bandwidth / 1e9,
                               units::format_bytes(d.memory_bytes));
  }
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
  } else if (what == "workloads") {
    const auto& kinds = Registry<Workload>::instance();
    for (const auto& name : kinds.names())
      std::cout << fmt::format("{:<22} {}\n", name, kinds.description(name));
  } else if (what == "traces") {
    std::cout
        << "swim    SWIM workload TSV (Facebook 2009/2010 samples): job, submit, gap, input, shuffle, output bytes\n"
           "rumen   Hadoop rumen job trace (JSON objects; SLS and gridmix samples), with preferredLocations\n"
           "jhist   MRv2 job history file (Avro-JSON events), one job per file\n"
           "Check a file with: clustersim trace FILE --format FORMAT\n";
  } else {
    list_devices();
  }
  return 0;
}

int trace(const std::string& format, const std::string& path)
{
  long maps = 0;
  double input = 0, shuffle = 0;
  const auto summary = read_trace(format.empty() ? detect_trace_format(path) : format, path, [&](TraceJob&& j) {
    maps += j.maps > 0 ? j.maps : static_cast<long>(j.map_input_bytes.size());
    input += j.input_bytes;
    shuffle += j.shuffle_bytes;
  });
  std::cout << describe(summary) << "\n";
  std::cout << fmt::format("  input {}  shuffle {}\n", units::format_bytes(input), units::format_bytes(shuffle));
  for (const auto& p : summary.problems)
    std::cout << "  " << p << "\n";
  return 0;
}

} // namespace

std::vector<Command> add_catalog_commands(CLI::App& app)
{
  auto what = std::make_shared<std::string>();
  auto* lister =
      app.add_subcommand("list", "list registered policies and workload kinds, catalog devices or trace formats");
  lister->add_option("what", *what, "policies | workloads | devices | traces")
      ->required()
      ->check(CLI::IsMember({"policies", "workloads", "devices", "traces"}));
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>();
  auto* tracer = app.add_subcommand("trace", "read a MapReduce trace and report what was read and skipped");
  tracer->add_option("file", *path, "trace file")->required();
  tracer->add_option("--format", *format, "swim | rumen | jhist (default: detected from the file's first bytes)")
      ->check(CLI::IsMember({"swim", "rumen", "jhist"}));
  return {{lister, [what] { return list(*what); }}, {tracer, [format, path] { return trace(*format, *path); }}};
}

} // namespace cs
