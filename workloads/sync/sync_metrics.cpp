#include "workloads/sync/sync_metrics.hpp"

#include "base/statistics.hpp"
#include "base/units.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace cs {

namespace {
double mean(const std::vector<double>& v)
{
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}
} // namespace

RunMetrics sync_metrics(const SyncRecord& r, const SyncSetup& setup)
{
  RunMetrics out;
  const double span = r.makespan > 0 ? r.makespan : 1e-300;
  out.set(metric::makespan_s, r.makespan);
  out.set(metric::iteration_time_s, r.makespan / (double(setup.budget) / setup.replicas)); // per step of every replica
  out.set(metric::samples_per_s, double(r.steps) * setup.compute.samples / span);
  out.set(metric::updates, r.contributions);
  out.set(metric::updates_per_s, r.contributions / span);
  out.set(metric::effective_updates, r.effective); // a convergence proxy, not accuracy (docs/stragglers.md)
  out.set(metric::effective_updates_per_s, r.effective / span);
  out.set(metric::mean_group_size, mean(r.group_sizes));
  out.set(metric::p99_group_size, percentile(r.group_sizes, 0.99));
  out.set(metric::mean_staleness, mean(r.staleness));
  out.set(metric::p99_staleness, percentile(r.staleness, 0.99));
  out.set(metric::max_staleness, r.staleness.empty() ? 0 : *std::max_element(r.staleness.begin(), r.staleness.end()));
  std::vector<double> idle;
  for (double c : r.compute_s)
    idle.push_back(std::max(0.0, r.makespan - c) / span);
  out.set(metric::mean_idle_fraction, mean(idle));
  out.set(metric::max_idle_fraction, idle.empty() ? 0 : *std::max_element(idle.begin(), idle.end()));
  if (setup.target > 0)
    out.set(metric::time_to_target_updates_s, r.target_time); // -1: not reached within the run
  out.set(metric::max_clock_gap, r.max_clock_gap);
  auto& B = out.breakdown;
  B["step_compute_s"] = setup.compute.iteration_s(std::vector<double>(setup.compute.stages.size(), 1.0));
  double bytes = 0;
  for (const auto& s : setup.compute.stages)
    bytes += s.sync_bytes;
  B["sync_bytes_per_replica"] = bytes;
  B["combinations"] = double(r.group_sizes.size());
  B["steps"] = double(r.steps);
  B["flows"] = double(r.flows);
  return out;
}

std::string sync_summary(const RunMetrics& metrics, const SyncSetup& setup, const std::string& scheme, int slow_devices)
{
  const auto& B = metrics.breakdown;
  const int pp = static_cast<int>(setup.compute.stages.size());
  std::string out = fmt::format("  workers   {} replicas{}, scheme {}; {} slow devices\n", setup.replicas,
                                pp > 1 ? fmt::format(" x {} stages", pp) : "", scheme, slow_devices);
  out += fmt::format("  step      compute {} undisturbed ({} microbatches), {} to average per replica\n",
                     units::format_time(B.at("step_compute_s")), setup.compute.microbatches,
                     units::format_bytes(B.at("sync_bytes_per_replica")));
  out += fmt::format("  run       {} steps in {}: {} per step, {:.1f} samples/s\n", B.at("steps"),
                     units::format_time(metrics.at(metric::makespan_s)),
                     units::format_time(metrics.at(metric::iteration_time_s)), metrics.at(metric::samples_per_s));
  out += fmt::format("  updates   {:.4g}/s; effective {:.4g}/s (staleness-discounted proxy); staleness mean {:.2f} "
                     "p99 {:.2f} steps\n",
                     metrics.at(metric::updates_per_s), metrics.at(metric::effective_updates_per_s),
                     metrics.at(metric::mean_staleness), metrics.at(metric::p99_staleness));
  out += fmt::format("  groups    mean size {:.2f}, p99 {:.0f}; workers idle {:.1f}% on average, {:.1f}% at most\n",
                     metrics.at(metric::mean_group_size), metrics.at(metric::p99_group_size),
                     100 * metrics.at(metric::mean_idle_fraction), 100 * metrics.at(metric::max_idle_fraction));
  return out;
}

std::string workers_csv(const SyncRecord& record, const SyncSetup& setup)
{
  std::string csv = "worker,host,compute_s,idle_s\n";
  for (std::size_t w = 0; w < record.compute_s.size(); ++w)
    csv += fmt::format("{},{},{:.6f},{:.6f}\n", w, setup.worker_host[w], record.compute_s[w],
                       std::max(0.0, record.makespan - record.compute_s[w]));
  return csv;
}

} // namespace cs
