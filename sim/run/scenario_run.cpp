#include "sim/run/scenario_run.hpp"

#include "models/cost/kernel_cost_model.hpp"
#include "models/device_catalog.hpp"
#include "models/workloads/data_parallel_training.hpp"
#include "models/workloads/layer_graph_training.hpp"
#include "policies/registry.hpp"
#include "sim/exec/executor.hpp"
#include "sim/platform/platform_spec.hpp"
#include "sim/report/chrome_trace.hpp"
#include "sim/report/collective_metrics.hpp"
#include "sim/report/training_metrics.hpp"
#include "models/workloads/collective_sweep.hpp"
#include "models/workloads/memory_footprint.hpp"
#include "models/workloads/pipeline_training.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/scenario/units.hpp"
#include "models/mapreduce/mapreduce_workload.hpp"
#include "sim/mapreduce/mapreduce_sim.hpp"
#include "sim/report/mapreduce_metrics.hpp"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>

#ifndef CS_VERSION
#define CS_VERSION "0.0.0"
#endif

namespace cs {

const char* clustersim_version() { return CS_VERSION; }

namespace {

void strip_override_tags(YAML::Node node)
{
  if (node.Tag().rfind("!cs-set-", 0) == 0)
    node.SetTag("");
  if (node.IsMap())
    for (auto it = node.begin(); it != node.end(); ++it)
      strip_override_tags(it->second);
  else if (node.IsSequence())
    for (auto child : node)
      strip_override_tags(child);
}

std::string summary_text(const Scenario& s, const PlatformSpec& p, const TrainingGraph& tr, const RunMetrics& m,
                         double wall)
{
  const auto& M = m.metrics;
  const auto& B = m.breakdown;
  std::string out;
  out += fmt::format("clustersim {} — {}\n", clustersim_version(), s.name);
  if (!s.description.empty())
    out += fmt::format("  {}\n", s.description);
  out += fmt::format("  cluster   {} x {} {} ({}, {} network, {} model)\n", s.cluster.nodes, s.cluster.gpus_per_node,
                     p.device->display_name, s.cluster.intra_node.kind, s.cluster.network.kind, p.network_model);
  const std::string shape = s.workload.model.graph.empty()
                                ? fmt::format("{} layers, hidden {}, seq {}", s.workload.model.layers,
                                              s.workload.model.hidden, s.workload.model.seq)
                                : fmt::format("layer graph of {} layers", s.workload.model.graph.size());
  out += fmt::format("  workload  {}, {:.3g}B params, {}; dp {}{} x {} microbatches of {}\n", shape,
                     tr.parameters / 1e9, s.workload.model.dtype, tr.ranks / tr.pipeline_stages / tr.tensor_parallel,
                     (tr.tensor_parallel > 1 ? fmt::format(" x tp {}", tr.tensor_parallel) : std::string()) +
                         (tr.pipeline_stages > 1 ? fmt::format(" x pp {} ({})", tr.pipeline_stages, pipeline_schedule_name(s))
                                                 : std::string()),
                     tr.microbatches, s.workload.batch.micro);
  if (M.count("bubble_fraction"))
    out += fmt::format("  pipeline  bubble {:.1f}% of compute\n", 100 * M.at("bubble_fraction"));
  out += fmt::format("  backend   {} ({} tasks, {} iterations)\n", s.backend, tr.graph.size(),
                     s.workload.iterations);
  out += fmt::format("  iteration {}   throughput {:.1f} samples/s   {:.1f} TFLOP/s per GPU\n",
                     units::format_time(M.at("iteration_time_s")), M.at("throughput_samples_per_s"),
                     M.at("tflops_per_gpu"));
  out += fmt::format("  time      compute {}  communication {}  exposed communication {} ({:.0f}% hidden)\n",
                     units::format_time(B.at("compute_s")), units::format_time(B.at("communication_s")),
                     units::format_time(B.at("exposed_communication_s")), 100.0 * B.at("overlap_fraction"));
  out += fmt::format("  traffic   {} per iteration ({} inter-node), {} gradient buckets\n",
                     units::format_bytes(M.at("network_bytes")), units::format_bytes(M.at("network_bytes_inter_node")),
                     tr.buckets);
  out += fmt::format("  memory    {} per GPU of {} ({}){}\n", units::format_bytes(M.at("peak_memory_bytes")),
                     units::format_bytes(M.at("memory_capacity_bytes")),
                     fmt::format("weights {}, grads {}, optimizer {}, activations {}",
                                 units::format_bytes(B.at("memory_parameters_bytes")),
                                 units::format_bytes(B.at("memory_gradients_bytes")),
                                 units::format_bytes(B.at("memory_optimizer_bytes")),
                                 units::format_bytes(B.at("memory_activations_bytes"))),
                     M.at("peak_memory_bytes") <= M.at("memory_capacity_bytes") ? "" : "  DOES NOT FIT");
  out += fmt::format("  wall time {:.3f} s\n", wall);
  return out;
}

} // namespace

std::string resolved_yaml(const Scenario& s)
{
  YAML::Node copy = YAML::Clone(s.resolved);
  strip_override_tags(copy);
  YAML::Emitter e;
  e << copy;
  return std::string(e.c_str()) + "\n";
}

namespace {

void fill_report(RunResult& result, const Scenario& s, const RunMetrics& metrics, double wall)
{
  auto& r = result.report;
  r["tool"] = "clustersim";
  r["version"] = clustersim_version();
  r["scenario"] = s.name;
  r["seed"] = s.seed;
  r["backend"] = s.backend;
  r["metrics"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : metrics.metrics)
    r["metrics"][k] = v;
  for (const auto& [k, v] : metrics.flags)
    r["metrics"][k] = v;
  r["breakdown"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : metrics.breakdown)
    r["breakdown"][k] = v;
  r["wall_time_s"] = wall;
}

double seconds_since(std::chrono::steady_clock::time_point start)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

RunResult run_collective(const Scenario& s, const RunOptions& options, const PlatformSpec& platform,
                         std::chrono::steady_clock::time_point wall_start)
{
  const auto& c = s.workload.collective;
  const int ranks = c.ranks > 0 ? c.ranks : platform.topology.host_count();
  // The analytical backend prices by the closed forms where they hold (DESIGN.md §3); simgrid always runs flows.
  SweepPricing pricing = SweepPricing::FLOWS;
  if (s.backend == "analytical" && c.pricing == "closed-form")
    pricing = SweepPricing::CLOSED_FORM;
  else if (s.backend == "analytical" && c.pricing == "auto" && closed_forms_fit(s.cluster.network))
    pricing = SweepPricing::CLOSED_FORM_WHERE_EXACT;
  CollectiveSweep sweep = build_collective_sweep(c, platform, ranks, pricing);
  Timeline timeline = run_backend(s.backend, sweep.graph, platform);
  auto rows = collective_rows(sweep, timeline, c.op);
  RunMetrics metrics = collective_metrics(sweep, rows, platform);
  RunResult result;
  double wall = seconds_since(wall_start);
  fill_report(result, s, metrics, wall);
  if (options.trace)
    result.trace_json = chrome_trace_json(sweep.graph, timeline, platform);
  result.files.emplace_back("collective.csv", collective_csv(rows));
  result.summary = fmt::format("clustersim {} — {}\n", clustersim_version(), s.name);
  if (!s.description.empty())
    result.summary += fmt::format("  {}\n", s.description);
  result.summary += fmt::format("  cluster   {} x {} {} ({}{}, {} network), backend {}\n", s.cluster.nodes,
                                s.cluster.gpus_per_node, platform.device->display_name, s.cluster.intra_node.kind,
                                platform.nvls ? " + NVLS" : "", s.cluster.network.kind, s.backend);
  if (s.backend == "analytical")
    result.summary += fmt::format("  pricing   {} of {} sizes by closed form, the rest as list-scheduled flows\n",
                                  sweep.closed_form_sizes, sweep.sizes.size());
  result.summary += nccl_tests_table(rows, c.op, ranks);
  result.summary += fmt::format("  wall time {:.3f} s ({} tasks)\n", wall, sweep.graph.size());
  return result;
}

/** Chrome trace of a MapReduce run: one process per host, one thread for maps and one for reducers. */
std::string mapreduce_trace_json(const MapReduceOutcome& o, const MapReduceWorkload& w, const PlatformSpec& platform)
{
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (int h = 0; h < platform.topology.host_count(); ++h)
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", h},
                      {"args", {{"name", platform.topology.vertex(platform.topology.hosts()[h]).name}}}});
  for (const auto& t : o.tasks) {
    const auto& job = w.jobs[t.job];
    std::string name = job.id + (t.map ? "/m" : "/r") + std::to_string(t.index) + (t.speculative ? " (speculative)" : "");
    events.push_back({{"ph", "X"}, {"name", name}, {"cat", t.map ? "map" : "reduce"}, {"pid", t.host},
                      {"tid", t.map ? 0 : 1}, {"ts", t.start * 1e6}, {"dur", (t.end - t.start) * 1e6},
                      {"args", {{"locality", t.locality}, {"killed", t.killed}}}});
  }
  nlohmann::ordered_json doc;
  doc["traceEvents"] = events;
  doc["displayTimeUnit"] = "ms";
  return doc.dump();
}

RunResult run_mapreduce(const Scenario& s, const RunOptions& options, const PlatformSpec& platform,
                        std::chrono::steady_clock::time_point wall_start)
{
  const auto& p = s.workload.mapreduce;
  TopologyCost cost(platform.topology, p.level_costs, p.middleboxes);
  const std::string base = std::filesystem::path(s.file).parent_path().string();
  MapReduceWorkload workload;
  try {
    workload = build_mapreduce_workload(p, cost.layout(), base, static_cast<std::uint64_t>(s.seed));
  } catch (const std::invalid_argument& e) { // nothing to replay: bad input, not a failed run
    throw scenario_error(s, p.trace.file.empty() ? "workload.mapreduce.synthetic" : "workload.mapreduce.trace.start",
                         e.what());
  }
  const std::string policy = s.policies.mapreduce.empty() ? "capacity" : s.policies.mapreduce;
  auto scheduler = Registry<MapReduceScheduler>::instance().create(policy);
  MapReduceOutcome outcome =
      simulate_mapreduce(workload.jobs, platform, p, *scheduler, cost, static_cast<std::uint64_t>(s.seed));
  RunMetrics metrics = mapreduce_metrics(outcome, cost);
  if (workload.trace) {
    metrics.breakdown["trace_jobs_read"] = static_cast<double>(workload.trace->jobs_read);
    metrics.breakdown["trace_rows_skipped"] = static_cast<double>(workload.trace->skipped);
    metrics.breakdown["trace_jobs_outside_window"] = static_cast<double>(workload.outside_window);
  }
  RunResult result;
  const double wall = seconds_since(wall_start);
  fill_report(result, s, metrics, wall);
  if (options.trace)
    result.trace_json = mapreduce_trace_json(outcome, workload, platform);
  std::string csv = "job,submit_s,finish_s,jct_s,maps,reduces,input_bytes,shuffle_bytes,output_bytes\n";
  for (std::size_t j = 0; j < workload.jobs.size(); ++j) {
    const auto& job = workload.jobs[j];
    const auto& rec = outcome.jobs[j];
    csv += fmt::format("{},{:.6f},{:.6f},{:.6f},{},{},{:.0f},{:.0f},{:.0f}\n", job.id, rec.submit, rec.finish,
                       rec.finish - rec.submit, rec.maps, rec.reduces, job.input_bytes, job.shuffle_bytes,
                       job.output_bytes);
  }
  result.files.emplace_back("jobs.csv", csv);
  const auto& M = metrics.metrics;
  auto& out = result.summary;
  out = fmt::format("clustersim {} — {}\n", clustersim_version(), s.name);
  if (!s.description.empty())
    out += fmt::format("  {}\n", s.description);
  out += fmt::format("  cluster   {} racks x {} hosts, {} containers each, tree network\n", s.cluster.racks,
                     s.cluster.hosts_per_rack, outcome.containers / (s.cluster.racks * s.cluster.hosts_per_rack));
  if (workload.trace) {
    out += "  trace     " + describe(*workload.trace) + "\n";
    for (std::size_t i = 0; i < workload.trace->problems.size() && i < 3; ++i)
      out += "            " + workload.trace->problems[i] + "\n";
    if (workload.trace->skipped > 3)
      out += fmt::format("            ... (clustersim trace FILE --format {} lists the first {})\n", p.trace.format,
                         TraceSummary::kMaxProblems);
  }
  out += fmt::format("  workload  {} jobs, scheduler {}\n", workload.jobs.size(), policy);
  out += fmt::format("  jobs      mean JCT {}  p50 {}  p95 {}  makespan {}\n", units::format_time(M.at("mean_jct_s")),
                     units::format_time(M.at("p50_jct_s")), units::format_time(M.at("p95_jct_s")),
                     units::format_time(M.at("makespan_s")));
  out += fmt::format("  locality  maps node {:.1f}%  rack {:.1f}%  off-rack {:.1f}%;  containers busy {:.1f}%\n",
                     100 * M.at("map_locality_node"), 100 * M.at("map_locality_rack"),
                     100 * M.at("map_locality_off_rack"), 100 * M.at("utilization"));
  out += fmt::format("  traffic   {} over the network (rack {}, pod {}, core {}); traffic cost {:.4g}; mean shuffle "
                     "flow {}\n",
                     units::format_bytes(M.at("network_bytes")), units::format_bytes(M.at("bytes_rack")),
                     units::format_bytes(M.at("bytes_pod")), units::format_bytes(M.at("bytes_core")),
                     M.at("traffic_cost"), units::format_time(M.at("mean_shuffle_flow_s")));
  out += fmt::format("  wall time {:.3f} s ({} activities, {} scheduling rounds)\n", wall, outcome.activities,
                     outcome.rounds);
  return result;
}

} // namespace

namespace {

// Memory per GPU of a layer graph: the stage whose weights, gradients, Adam state (16 bytes per parameter in
// 16-bit mixed precision) and held activations (its layers' outputs per sample x micro x microbatches in flight)
// add up to the most, plus the gradient bucket.
MemoryFootprint layer_graph_memory(const Scenario& s, const LayerGraphTraining& g)
{
  const double e = dtype_bytes(s.workload.model.dtype);
  MemoryFootprint worst;
  for (std::size_t st = 0; st < g.stage_params.size(); ++st) {
    MemoryFootprint f;
    f.parameters = g.stage_params[st] * e;
    f.gradients = g.stage_params[st] * e;
    f.optimizer = g.stage_params[st] * 12.0;
    f.activations = g.stage_activation_bytes[st] * s.workload.batch.micro * g.stage_in_flight.at(st);
    f.buffers = s.workload.gradient_bucket.value;
    if (st == 0 || f.total() > worst.total())
      worst = f;
  }
  return worst;
}

} // namespace

RunResult run_scenario(const Scenario& s, const RunOptions& options)
{
  auto wall_start = std::chrono::steady_clock::now();
  const DeviceSpec& device = *DeviceCatalog::builtin().find(s.cluster.device);
  PlatformSpec platform = build_platform_spec(s.cluster, device);
  apply_background_traffic(platform, s.cluster.network, std::filesystem::path(s.file).parent_path().string());
  if (s.workload.kind == "collective")
    return run_collective(s, options, platform, wall_start);
  if (s.workload.kind == "mapreduce")
    return run_mapreduce(s, options, platform, wall_start);
  if (s.workload.kind != "transformer-training")
    throw std::logic_error("workload kind '" + s.workload.kind + "' has no builder");
  const int gpus = s.cluster.nodes * s.cluster.gpus_per_node;
  const int pp = s.workload.parallel.pp;
  const int tp = s.workload.parallel.tp;
  const int dp = s.workload.parallel.dp > 0 ? s.workload.parallel.dp : gpus / (pp * tp);
  auto sync = Registry<GradientSync>::instance().create(s.policies.sync);
  const DeviceProfile profile = s.cluster.profile.empty() ? *builtin_profile(device.name) : load_profile(s.cluster.profile);
  auto cost = make_cost_model(device, profile);
  const bool layer_graph = !s.workload.model.graph.empty();
  const bool pipelined = pp > 1 || s.workload.parallel.vpp > 1 || layer_graph;
  const std::string schedule_name = pipeline_schedule_name(s);
  auto schedule = Registry<PipelineSchedule>::instance().create(schedule_name);
  LayerGraphTraining graph_build;
  if (layer_graph)
    graph_build = build_layer_graph_training(s.workload, *cost, dp, pp, schedule_name, *schedule, *sync, platform);
  TrainingGraph training = layer_graph ? std::move(graph_build.training)
                           : pipelined ? build_pipeline_training(s.workload, *cost, dp, pp, *schedule, *sync, platform,
                                                                 options.one_replica)
                                       : build_data_parallel_training(s.workload, *cost, dp, *sync, platform,
                                                                      options.one_replica);
  Timeline timeline = run_backend(s.backend, training.graph, platform);
  RunMetrics metrics = training_metrics(training, timeline, platform);
  // Without a pipeline a GPU holds one microbatch's activations at a time; with one, what its schedule keeps.
  MemoryLayout layout;
  layout.dp = dp;
  layout.pp = pp;
  layout.tp = tp;
  layout.in_flight_microbatches = pipelined ? (training.in_flight_peak + training.chunks - 1) / training.chunks : 1;
  if (pipelined)
    metrics.metrics["bubble_fraction"] =
        (metrics.metrics.at("iteration_time_s") - metrics.breakdown.at("compute_s")) / metrics.breakdown.at("compute_s");
  layout.bucket_bytes = s.workload.gradient_bucket.value;
  layout.layers_on_device = training.max_layers_per_device;
  layout.sequence_parallel = s.workload.parallel.sequence_parallel && tp > 1;
  layout.zero = s.workload.parallel.zero;
  MemoryFootprint memory = layer_graph ? layer_graph_memory(s, graph_build)
                                       : transformer_memory(s.workload.model, s.workload.batch.micro, layout);
  // Pipelines: the device whose layers and held microbatches need the most (1F1B's first stage holds p
  // microbatches, its last one; a partition can give them different layer counts).
  if (pipelined && !layer_graph && !training.layers_per_device.empty()) {
    for (std::size_t d = 0; d < training.layers_per_device.size(); ++d) {
      MemoryLayout here = layout;
      here.layers_on_device = training.layers_per_device[d];
      here.in_flight_microbatches = (training.in_flight_per_device.at(d) + training.chunks - 1) / training.chunks;
      const MemoryFootprint f = transformer_memory(s.workload.model, s.workload.batch.micro, here);
      if (d == 0 || f.total() > memory.total() || memory.total() == 0)
        memory = f;
    }
  }
  // MFU: model FLOPs per GPU-second over the dtype's dense peak.
  metrics.metrics["mfu"] = metrics.metrics.at("tflops_per_gpu") * 1e12 / device.peak(s.workload.model.dtype);
  if (pipelined) { // per pipeline stage (replica 0): compute time and the rest of the iteration, per iteration
    std::map<int, double> busy_on_host;
    for (const auto& t : training.graph.tasks())
      if (t.kind == TaskKind::COMPUTE)
        busy_on_host[t.host] += t.seconds;
    for (int stage = 0; stage < pp; ++stage) {
      const double busy = busy_on_host[pipeline_host(s.workload.parallel, dp, 0, stage)] / s.workload.iterations;
      metrics.breakdown["stage" + std::to_string(stage) + "_busy_s"] = busy;
      metrics.breakdown["stage" + std::to_string(stage) + "_idle_s"] = metrics.metrics.at("iteration_time_s") - busy;
    }
  }
  metrics.metrics["peak_memory_bytes"] = memory.total();
  metrics.metrics["memory_capacity_bytes"] = device.memory_bytes;
  metrics.flags["fits_in_memory"] = memory.total() <= device.memory_bytes;
  for (const auto& [k, v] : memory.breakdown())
    metrics.breakdown[k] = v;
  RunResult result;
  double wall = seconds_since(wall_start);
  fill_report(result, s, metrics, wall);
  if (options.trace)
    result.trace_json = chrome_trace_json(training.graph, timeline, platform);
  result.summary = summary_text(s, platform, training, metrics, wall);
  return result;
}

} // namespace cs
