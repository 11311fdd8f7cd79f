#include "sim/goodput/goodput.hpp"
#include "sim/goodput/checkpoint_traffic.hpp"
#include "sim/goodput/goodput_metrics.hpp"

#include "base/input_error.hpp"
#include "base/units.hpp"
#include "models/devices/device_catalog.hpp"
#include "sim/report/gnuplot.hpp"
#include "sim/run/scenario_run.hpp"
#include "sim/sweep/sweep_results.hpp"
#include "workloads/training/training_metrics.hpp"
#include "workloads/training/training_workload.hpp"

#include <cmath>
#include <fmt/format.h>

namespace cs {
namespace {

Estimate estimate_of(const std::vector<double>& values)
{
  double mean = 0;
  for (double v : values)
    mean += v;
  mean = values.empty() ? 0 : mean / values.size();
  return {mean, mean_interval95(values, mean)};
}

// The job's mean time between unexpected interruptions.
double job_mtbf(const LongRunSetup& setup)
{
  const auto rates = failure_rates(setup);
  double rate = 0;
  for (const auto& c : setup.failures.causes)
    if (!c.planned)
      rate += rates.at(c.name);
  return rate > 0 ? 1.0 / rate : 0.0;
}

} // namespace

GoodputResult estimate_long_run(const LongRunSetup& setup, int seeds)
{
  GoodputResult r;
  r.setup = setup;
  std::vector<double> interruptions, unexpected, ettr, goodput, redo, restart, stalls, in_memory_losses;
  std::map<std::string, std::vector<double>> causes;
  for (const auto& c : setup.failures.causes)
    causes[c.name];
  const double gpu_h = setup.gpus / 3600.0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const LongRunOutcome o = simulate_long_run(setup, static_cast<std::uint64_t>(seed));
    interruptions.push_back(o.interruptions);
    unexpected.push_back(o.unexpected);
    ettr.push_back(o.ettr());
    goodput.push_back(o.productive_s / setup.step_s * setup.tokens_per_step / o.wall_s);
    redo.push_back(o.redo_s * gpu_h);
    restart.push_back(o.restart_s * gpu_h);
    stalls.push_back(o.checkpoint_s * gpu_h);
    in_memory_losses.push_back(o.in_memory_losses);
    for (auto& [name, counts] : causes)
      counts.push_back(o.by_cause.count(name) ? o.by_cause.at(name) : 0);
  }
  r.interruptions = estimate_of(interruptions);
  r.unexpected = estimate_of(unexpected);
  r.ettr = estimate_of(ettr);
  r.goodput_tokens_per_s = estimate_of(goodput);
  r.redo_gpu_h = estimate_of(redo);
  r.restart_gpu_h = estimate_of(restart);
  r.checkpoint_gpu_h = estimate_of(stalls);
  r.in_memory_losses = estimate_of(in_memory_losses);
  for (const auto& [name, counts] : causes)
    r.by_cause[name] = estimate_of(counts);
  r.mtbf_s = job_mtbf(setup);
  r.young_daly_s = std::sqrt(2.0 * setup.stall_s * r.mtbf_s);
  return r;
}

GoodputResult best_interval(LongRunSetup setup, int seeds)
{
  // A log grid from one step to a day, every interval drawn with the same seeds so that the curve is smooth. An
  // asynchronous checkpoint keeps storage busy after the job goes on: the grid keeps storage idle at least half the
  // time (an interval of twice its background write).
  const double lo = std::max(setup.step_s, 2 * setup.durable_s - setup.stall_s), hi = std::max(lo, 86400.0);
  GoodputResult best;
  double best_ettr = -1;
  std::vector<std::pair<double, double>> curve;
  for (int i = 0; i <= 40; ++i) {
    setup.interval_s = lo * std::pow(hi / lo, i / 40.0);
    GoodputResult r = estimate_long_run(setup, seeds);
    curve.emplace_back(setup.interval_s, r.ettr.mean);
    if (r.ettr.mean > best_ettr) {
      best_ettr = r.ettr.mean;
      best = std::move(r);
    }
  }
  best.ettr_by_interval = curve;
  return best;
}

CheckpointCost checkpoint_cost(const Scenario& s, double parameters, const StepRun* step)
{
  const auto& params = workload_as<TrainingWorkload>(s).params;
  CheckpointCost c;
  c.bytes = parameters * (dtype_bytes(params.model.dtype) + 12.0); // weights, fp32 master copy, two Adam moments
  const double per_gpu = c.bytes / s.cluster.gpus;
  c.write_s = simulate_checkpoint_write(s, per_gpu);
  c.load_s = c.write_s; // the same flows the other way over full-duplex links
  switch (params.checkpoint.mode) {
  case CheckpointMode::SYNC:
    c.stall_s = c.durable_s = c.write_s;
    break;
  case CheckpointMode::ASYNC: { // the job waits for the copy to pinned host memory over PCIe, storage follows
    const double host_copy = simulate_host_copy(s, per_gpu);
    c.stall_s = host_copy;
    c.durable_s = host_copy + c.write_s;
    if (step && step->makespan_s > 0) {
      // The write leaves host memory beside the next steps. It has the NICs' share the step leaves (its busiest
      // NIC's, on average), and its own load on the NICs slows the step; a write that outlasts the simulated
      // iterations slows the later ones alike.
      c.beside_step = true;
      c.write_beside_s = simulate_checkpoint_write(s, per_gpu, 1 - step->nic_busy_fraction);
      const StepRun beside =
          run_step(s, [&](PlatformSpec& p) { load_nics_with_write(p, s, per_gpu, c.write_beside_s); });
      c.step_slowdown_s =
          std::max(0.0, beside.makespan_s - step->makespan_s) * std::max(1.0, c.write_beside_s / step->makespan_s);
      c.stall_s += c.step_slowdown_s;
      c.durable_s = host_copy + c.write_beside_s;
    }
    break;
  }
  case CheckpointMode::IN_MEMORY: // a peer node's host memory over the NICs and the fabric (Gemini)
    c.stall_s = c.durable_s = c.load_s = simulate_peer_copy(s, per_gpu);
    break;
  }
  return c;
}

LongRunSetup long_run_setup(const Scenario& s, const StepRun& step, const CheckpointCost& cost, double days)
{
  const CheckpointParams& checkpoint = workload_as<TrainingWorkload>(s).params.checkpoint;
  LongRunSetup setup;
  setup.step_s = step.iteration_s;
  setup.tokens_per_step = step.tokens_per_step;
  setup.gpus = s.cluster.gpus;
  setup.nodes = s.cluster.nodes;
  setup.nics = s.cluster.nodes * s.cluster.network.nics_per_node;
  setup.failures = s.cluster.failures;
  setup.spares = std::min(s.cluster.spares, s.cluster.nodes);
  setup.days = days;
  setup.stall_s = cost.stall_s;
  setup.durable_s = cost.durable_s;
  setup.load_s = cost.load_s;
  setup.in_memory = checkpoint.mode == CheckpointMode::IN_MEMORY;
  setup.storage_interval_s = checkpoint.storage_interval.value;
  setup.storage_durable_s = setup.storage_load_s = cost.write_s; // host memory to storage and back, over the fabric
  return setup;
}

GoodputResult run_goodput(const Scenario& s, const GoodputOptions& options)
{
  const auto* training = dynamic_cast<const TrainingWorkload*>(s.workload.get());
  if (!training)
    throw s.source.error_at("workload.kind", "goodput composes a transformer-training scenario's steps");
  if (!s.cluster.failures.enabled())
    throw s.source.error_at("cluster", "goodput needs cluster.failures (a catalog such as llama3-2024, or rates)");
  const CheckpointParams& ckpt = training->params.checkpoint;
  if (!ckpt.given)
    throw s.source.error_at("workload", "goodput needs workload.checkpoint (interval and mode)");
  if (s.cluster.storage.bandwidth.value <= 0)
    throw s.source.error_at("cluster", "goodput needs cluster.storage.bandwidth (where checkpoints are written)");
  const StepRun step = run_step(s);
  const CheckpointCost cost = checkpoint_cost(s, step.parameters, &step);
  LongRunSetup setup = long_run_setup(s, step, cost, options.days);
  GoodputResult best;
  if (ckpt.optimal) {
    best = best_interval(setup, options.seeds);
  } else {
    if (ckpt.interval.value < cost.durable_s)
      throw s.source.error_at("workload.checkpoint.interval",
                              fmt::format("an interval of {} is shorter than a checkpoint write ({})",
                                          units::format_time(ckpt.interval.value), units::format_time(cost.durable_s)));
    setup.interval_s = ckpt.interval.value;
    best = estimate_long_run(setup, options.seeds);
  }
  best.checkpoint = cost;
  if (options.by_gpus)
    best.ettr_by_gpus = ettr_by_gpus(s, best, options.seeds);
  return best;
}

std::vector<std::pair<std::string, std::string>> goodput_plots(const GoodputResult& r)
{
  std::vector<std::string> files{"ettr-gpus.png", "ettr-gpus.svg"};
  std::string script = "set grid\nset key off\n$gpus << EOD\n";
  for (const ScaledRun& run : r.ettr_by_gpus)
    script += fmt::format("{} {:.9g}\n", run.gpus, run.ettr);
  script += "EOD\n" + gnuplot_terminals("ettr-gpus", "set title \"ETTR against the GPU count (weak scaling, per-unit "
                                                     "rates held)\"\nset xlabel \"GPUs\"\nset ylabel \"ETTR\"\n"
                                                     "set logscale x 2\nplot $gpus using 1:2 with linespoints lw 2\n"
                                                     "unset logscale x\n");
  if (!r.ettr_by_interval.empty()) {
    files.insert(files.end(), {"ettr-interval.png", "ettr-interval.svg"});
    script += "$interval << EOD\n";
    for (const auto& [interval, ettr] : r.ettr_by_interval)
      script += fmt::format("{:.9g} {:.9g}\n", interval, ettr);
    script += "EOD\n" + gnuplot_terminals("ettr-interval",
                                          fmt::format("set title \"ETTR against the checkpoint interval (Young/Daly "
                                                      "{:.0f} s)\"\nset xlabel \"interval (s)\"\nset ylabel \"ETTR\"\n"
                                                      "set logscale x\nplot $interval using 1:2 with linespoints lw "
                                                      "2\nunset logscale x\n",
                                                      r.young_daly_s));
  }
  return render_gnuplot(script, files);
}

nlohmann::ordered_json goodput_json(const GoodputResult& r, const GoodputOptions& options)
{
  auto est = [](const Estimate& e) { return nlohmann::ordered_json{{"mean", e.mean}, {"ci95", e.half}}; };
  nlohmann::ordered_json j;
  j["days"] = options.days;
  j["seeds"] = options.seeds;
  j["gpus"] = r.setup.gpus;
  j["step_time_s"] = r.setup.step_s;
  j["interruptions"] = est(r.interruptions);
  j["interruptions"]["unexpected"] = est(r.unexpected);
  j["interruptions"]["by_cause"] = nlohmann::ordered_json::object();
  for (const auto& [name, e] : r.by_cause)
    j["interruptions"]["by_cause"][name] = est(e);
  j["ettr"] = est(r.ettr);
  j["goodput_tokens_per_s"] = est(r.goodput_tokens_per_s);
  j["lost_gpu_hours"] = {{"redone_work", est(r.redo_gpu_h)},
                         {"restarts", est(r.restart_gpu_h)},
                         {"checkpoint_stalls", est(r.checkpoint_gpu_h)}};
  if (r.setup.in_memory)
    j["in_memory_losses"] = est(r.in_memory_losses);
  j["mtbf_s"] = r.mtbf_s;
  j["checkpoint_bytes"] = r.checkpoint.bytes;
  j["checkpoint_write_s"] = r.checkpoint.write_s;
  j["checkpoint_stall_s"] = r.checkpoint.stall_s;
  j["checkpoint_load_s"] = r.checkpoint.load_s;
  if (r.checkpoint.beside_step) {
    j["checkpoint_write_beside_step_s"] = r.checkpoint.write_beside_s;
    j["checkpoint_step_slowdown_s"] = r.checkpoint.step_slowdown_s;
  }
  j["checkpoint_interval_s"] = r.setup.interval_s;
  j["young_daly_interval_s"] = r.young_daly_s;
  if (!r.ettr_by_gpus.empty())
    j["ettr_by_gpus"] = nlohmann::ordered_json::array();
  for (const ScaledRun& run : r.ettr_by_gpus)
    j["ettr_by_gpus"].push_back({{"gpus", run.gpus},
                                 {"step_time_s", run.step_s},
                                 {"ettr", run.ettr},
                                 {"goodput_tokens_per_s", run.goodput_tokens_per_s}});
  if (!r.ettr_by_interval.empty()) {
    j["ettr_by_interval"] = nlohmann::ordered_json::array();
    for (const auto& [interval, ettr] : r.ettr_by_interval)
      j["ettr_by_interval"].push_back({{"interval_s", interval}, {"ettr", ettr}});
  }
  return j;
}

std::string goodput_summary(const GoodputResult& r, const GoodputOptions& options)
{
  std::string out = fmt::format("  run       {:.0f} days on {} GPUs, {} seeds; step {}\n", options.days, r.setup.gpus,
                                options.seeds, units::format_time(r.setup.step_s));
  out += fmt::format("  failures  {:.1f} ± {:.1f} interruptions ({:.1f} unexpected); job MTBF {}\n",
                     r.interruptions.mean, r.interruptions.half, r.unexpected.mean, units::format_time(r.mtbf_s));
  out += fmt::format("  checkpoint {} every {} (Young/Daly {}); write {}, stall {}\n",
                     units::format_bytes(r.checkpoint.bytes), units::format_time(r.setup.interval_s),
                     units::format_time(r.young_daly_s), units::format_time(r.checkpoint.write_s),
                     units::format_time(r.checkpoint.stall_s));
  if (r.checkpoint.beside_step)
    out +=
        fmt::format("  beside    the background write takes {} beside the steps and slows them by {} in all\n",
                    units::format_time(r.checkpoint.write_beside_s), units::format_time(r.checkpoint.step_slowdown_s));
  out += fmt::format("  ETTR      {:.2f}% ± {:.2f}; goodput {} tokens/s\n", 100 * r.ettr.mean, 100 * r.ettr.half,
                     units::format_count(r.goodput_tokens_per_s.mean));
  if (r.setup.in_memory)
    out += fmt::format("  in-memory {:.2f} ± {:.2f} checkpoints lost with a node and its partner ({})\n",
                       r.in_memory_losses.mean, r.in_memory_losses.half,
                       r.setup.storage_interval_s > 0
                           ? "back to storage, copied every " + units::format_time(r.setup.storage_interval_s)
                           : std::string("no storage_interval: each started over"));
  out += fmt::format("  lost      {} GPU-hours redone, {} restarting, {} in checkpoint stalls\n",
                     units::format_count(r.redo_gpu_h.mean), units::format_count(r.restart_gpu_h.mean),
                     units::format_count(r.checkpoint_gpu_h.mean));
  return out;
}

std::vector<std::pair<std::string, double>> goodput_metrics(const nlohmann::json& j)
{
  std::vector<std::pair<std::string, double>> out;
  auto take = [&](const Metric& m, const nlohmann::json::json_pointer& at) {
    if (j.contains(at) && j.at(at).is_number())
      out.emplace_back(std::string(m.name), j.at(at).get<double>());
  };
  using ptr = nlohmann::json::json_pointer;
  take(metric::ettr, ptr("/ettr/mean"));
  take(metric::ettr_ci95, ptr("/ettr/ci95"));
  take(metric::goodput_tokens_per_s, ptr("/goodput_tokens_per_s/mean"));
  take(metric::interruptions, ptr("/interruptions/mean"));
  take(metric::unexpected_interruptions, ptr("/interruptions/unexpected/mean"));
  take(metric::mtbf_s, ptr("/mtbf_s"));
  take(metric::checkpoint_interval_s, ptr("/checkpoint_interval_s"));
  take(metric::checkpoint_write_s, ptr("/checkpoint_write_s"));
  take(metric::lost_gpu_hours_redone, ptr("/lost_gpu_hours/redone_work/mean"));
  take(metric::lost_gpu_hours_restarts, ptr("/lost_gpu_hours/restarts/mean"));
  take(metric::lost_gpu_hours_checkpoints, ptr("/lost_gpu_hours/checkpoint_stalls/mean"));
  return out;
}

} // namespace cs
