#include "sim/plan/job_capacity.hpp"

#include "base/input_error.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/run/scenario_run.hpp"
#include "workloads/gpujobs/gpu_jobs_metrics.hpp"

#include <algorithm>

namespace cs {

bool is_job_capacity_metric(const std::string& m)
{
  return m == "mean_jct_hours" || m == "p95_jct_hours" || m == "mean_wait_hours" || m == "p95_wait_hours";
}

double JobCapacityCandidate::metric(const std::string& name) const
{
  if (name == "mean_jct_hours")
    return mean_jct_s / 3600;
  if (name == "p95_jct_hours")
    return p95_jct_s / 3600;
  if (name == "mean_wait_hours")
    return mean_wait_s / 3600;
  if (name == "p95_wait_hours")
    return p95_wait_s / 3600;
  return cost_usd;
}

namespace {

// One composition replayed: the scenario with this cluster, checked as a user's would be, then run.
JobCapacityCandidate replay(Scenario s, const CapacityOptions& o, JobCapacityCandidate c)
{
  const int per_node = s.cluster.gpus_per_node;
  s.cluster.nodes = c.gpus / per_node;
  s.cluster.gpus = s.cluster.nodes * per_node;
  if (per_node % c.nics_per_node != 0) {
    c.why = "NICs do not divide the node's GPUs";
    return c;
  }
  try {
    check_scenario(s);
    const RunMetrics metrics = run_scenario(s, RunOptions{}).metrics;
    c.mean_jct_s = metrics.at(metric::mean_jct_s);
    c.p95_jct_s = metrics.at(metric::p95_jct_s);
    c.mean_wait_s = metrics.at(metric::mean_queueing_delay_s);
    c.p95_wait_s = metrics.at(metric::p95_queueing_delay_s);
    c.makespan_s = metrics.at(metric::makespan_s);
    c.utilization = metrics.at(metric::gpu_utilization);
    c.cost_usd = composition_usd_per_hour(s.cluster, c.gpus, c.usd_per_gpu_hour, o) * c.makespan_s / 3600;
    c.ran = true;
  } catch (const InputError& e) { // this composition cannot run the scenario (e.g. a dtype the GPU lacks)
    c.why = e.what();
  }
  return c;
}

} // namespace

std::vector<JobCapacityCandidate> plan_job_capacity(const Scenario& base, const CapacityOptions& o)
{
  const auto prices = capacity_prices(o);
  std::vector<JobCapacityCandidate> out;
  for_each_composition(base, o, false,
                       [&](const Scenario& s, const std::string& device, int gpus, int nics, double ratio) {
                         JobCapacityCandidate c;
                         c.device = device;
                         c.gpus = gpus / s.cluster.gpus_per_node * s.cluster.gpus_per_node; // whole nodes
                         c.nics_per_node = nics;
                         c.oversubscription = ratio;
                         c.usd_per_gpu_hour = prices.at(device);
                         out.push_back(replay(s, o, c));
                       });
  for (auto& c : out) {
    if (!c.ran)
      continue;
    const double v = c.metric(o.target.metric);
    c.meets_target = o.target.at_most ? v <= o.target.value : v >= o.target.value;
    c.on_frontier = std::none_of(out.begin(), out.end(), [&](const JobCapacityCandidate& d) {
      return d.ran && d.cost_usd <= c.cost_usd && d.mean_jct_s <= c.mean_jct_s &&
             (d.cost_usd < c.cost_usd || d.mean_jct_s < c.mean_jct_s);
    });
  }
  return out;
}

} // namespace cs
