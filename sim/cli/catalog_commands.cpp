// `clustersim list policies|devices|traces|workloads` and `clustersim trace FILE`.
#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "base/registry.hpp"
#include "base/units.hpp"
#include "core/workload.hpp"
#include "models/devices/device_catalog.hpp"
#include "models/spark/spark_cache.hpp"
#include "sim/cli/command.hpp"
#include "traces/chakra_trace.hpp"
#include "traces/gpu_job_trace.hpp"
#include "traces/kineto_trace.hpp"
#include "traces/spark_event_log.hpp"
#include "traces/trace_job.hpp"

#include <algorithm>
#include <filesystem>
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
    // Spark's evictions are a parameter of either cache layout, not a domain of their own.
    const auto& evictions = Registry<CacheEviction>::instance();
    std::cout << "\nspark_cache eviction (policies.spark_cache: {name: ..., eviction: ...}):\n";
    for (const auto& name : evictions.names())
      std::cout << fmt::format("  {:<22} {}\n", name, evictions.description(name));
  } else if (what == "workloads") {
    const auto& kinds = Registry<Workload>::instance();
    for (const auto& name : kinds.names())
      std::cout << fmt::format("{:<22} {}\n", name, kinds.description(name));
  } else if (what == "traces") {
    std::cout
        << "swim    SWIM workload TSV (Facebook 2009/2010 samples): job, submit, gap, input, shuffle, output bytes\n"
           "rumen   Hadoop rumen job trace (JSON objects; SLS and gridmix samples), with preferredLocations\n"
           "jhist   MRv2 job history file (Avro-JSON events), one job per file\n"
           "philly  Microsoft Philly GPU-cluster jobs (CSV: timestamp, duration, num_gpus, gpu_time, cluster)\n"
           "openb   Alibaba OpenB GPU pods (CSV: name, cpu_milli, memory_mib, num_gpu, gpu_milli, ...)\n"
           "tiresias  Tiresias simulator jobs (CSV: job_id, num_gpu, submit_time, iterations, model_name, ...)\n"
           "kineto  PyTorch profiler trace (Chrome trace JSON, .json or .json.gz)\n"
           "chakra  Chakra execution trace (.et protobuf or its JSON form, maybe .gz)\n"
           "spark   Spark event log (JSON lines; a file, .gz, or a rolling events_N_* directory)\n"
           "Check a file with: clustersim trace FILE [--format FORMAT]\n";
  } else {
    list_devices();
  }
  return 0;
}

// GPU job traces have a CSV header (plain or gzip-compressed); Kineto traces are one JSON object with traceEvents
// (maybe gzip-compressed); the rest are MapReduce formats.
std::string detect_any_format(const std::string& path)
{
  if (std::filesystem::is_directory(path)) { // a rolling Spark event log is a folder of events_<N>_* files
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(path, ec))
      if (entry.path().filename().string().rfind("events_", 0) == 0)
        return "spark";
  }
  if (looks_like_chakra(path))
    return "chakra";
  try {
    return detect_gpu_trace_format(path);
  } catch (const InputError&) {
  }
  std::ifstream in = open_input_file(path, "trace");
  std::string head(1 << 20, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if ((head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b') || head.find("\"traceEvents\"") != std::string::npos)
    return "kineto";
  if (head.find("\"Event\":\"SparkListener") != std::string::npos)
    return "spark";
  try {
    return detect_trace_format(path);
  } catch (const InputError& e) {
    throw InputError(
        e.file(), e.line(), e.column(),
        "cannot tell the trace format (not a Kineto, Chakra or GPU-job trace, a rumen JSON stream, a jhist "
        "Avro-Json file or SWIM tab-separated rows); name it with --format "
        "swim|rumen|jhist|philly|openb|tiresias|kineto|chakra|spark");
  }
}

int gpu_jobs_trace(const std::string& format, const std::string& path)
{
  GpuTraceSummary summary;
  const auto jobs = read_gpu_trace(format, path, summary);
  double gpu_seconds = 0, first = 1e300, last = -1e300;
  int widest = 0;
  for (const auto& j : jobs) {
    gpu_seconds += j.duration_s * j.gpus * j.gpu_milli / 1000.0;
    first = std::min(first, j.submit_s);
    last = std::max(last, j.submit_s);
    widest = std::max(widest, j.gpus);
  }
  std::cout << describe(summary) << "\n";
  if (!jobs.empty())
    std::cout << fmt::format("  submissions over {}, {:.0f} GPU-hours, up to {} GPUs per job\n",
                             units::format_time(last - first), gpu_seconds / 3600, widest);
  return 0;
}

int kineto_trace(const std::string& path)
{
  const KinetoTrace t = read_kineto(path);
  int nccl = 0;
  double busy = 0;
  for (const auto& op : t.ops) {
    nccl += !op.collective.empty() || op.name.rfind("nccl", 0) == 0;
    busy += op.dur;
  }
  double step = 0;
  for (const auto& s : t.steps)
    step += s.dur / double(t.steps.size());
  std::cout << fmt::format("{} (kineto): rank {} of {}, {}; {} GPU operations ({} NCCL, {} busy), {} runtime "
                           "calls, {} profiler steps{}\n",
                           path, t.rank, t.world_size, t.device_name.empty() ? "no device name" : t.device_name,
                           t.ops.size(), nccl, units::format_time(busy), t.calls.size(), t.steps.size(),
                           t.steps.empty() ? "" : " of " + units::format_time(step) + " on average");
  return 0;
}

int chakra_trace(const std::string& path)
{
  const ChakraTrace t = read_chakra(path);
  chakra_order(t); // a cycle is an error here too
  int cpu = 0, kernels = 0, collectives = 0, timed = 0;
  double cpu_s = 0, gpu_s = 0, comm_bytes = 0;
  for (const auto& n : t.nodes) {
    cpu += n.cpu;
    kernels += !n.cpu && n.type == ChakraNode::COMPUTE;
    collectives += !n.cpu && n.type == ChakraNode::COLLECTIVE;
    timed += n.duration > 0;
    (n.cpu ? cpu_s : gpu_s) += n.duration;
    comm_bytes += n.cpu ? 0 : n.comm_bytes;
  }
  std::cout << fmt::format("{} (chakra {}{}): {} nodes: {} CPU ops ({} measured), {} kernels and {} GPU collectives "
                           "({} measured, {} of collectives); {} nodes have a duration; {} dependencies on nodes "
                           "not in the trace left out\n",
                           path, t.form, t.schema.empty() ? "" : ", schema " + t.schema, t.nodes.size(), cpu,
                           units::format_time(cpu_s), kernels, collectives, units::format_time(gpu_s),
                           units::format_bytes(comm_bytes), timed, t.dropped_deps);
  return 0;
}

int trace(const std::string& given, const std::string& path)
{
  const std::string format = given.empty() ? detect_any_format(path) : given;
  if (format == "kineto")
    return kineto_trace(path);
  if (format == "chakra")
    return chakra_trace(path);
  if (format == "spark") {
    std::cout << describe(read_spark_event_log(path));
    return 0;
  }
  const auto& gpu = gpu_trace_formats();
  if (std::find(gpu.begin(), gpu.end(), format) != gpu.end())
    return gpu_jobs_trace(format, path);
  long maps = 0;
  double input = 0, shuffle = 0;
  const auto summary = read_trace(format, path, [&](TraceJob&& j) {
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
  auto* tracer = app.add_subcommand(
      "trace", "read a trace (MapReduce, Spark, GPU-cluster jobs, PyTorch profiler, Chakra) and report "
               "what was read and skipped");
  tracer->add_option("file", *path, "trace file")->required();
  tracer
      ->add_option("--format", *format,
                   "swim | rumen | jhist | philly | openb | tiresias | kineto | chakra | spark (default: detected from "
                   "the file)")
      ->check(CLI::IsMember({"swim", "rumen", "jhist", "philly", "openb", "tiresias", "kineto", "chakra", "spark"}));
  return {{lister, [what] { return list(*what); }}, {tracer, [format, path] { return trace(*format, *path); }}};
}

} // namespace cs
