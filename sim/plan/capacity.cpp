#include "sim/plan/capacity.hpp"

#include "base/input_error.hpp"
#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"
#include "models/transformer/transformer.hpp"
#include "sim/goodput/goodput.hpp"
#include "sim/plan/gpu_prices.hpp"
#include "workloads/training/training_workload.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace cs {

CapacityTarget parse_capacity_target(const std::string& text)
{
  static const std::vector<std::string> metrics{"time_to_train_days", "time_to_train_hours", "tokens_per_s",
                                                "cost_usd",           "mean_jct_hours",      "p95_jct_hours",
                                                "mean_wait_hours",    "p95_wait_hours"};
  CapacityTarget t;
  const auto op = text.find_first_of("<>");
  if (op == std::string::npos || op + 1 >= text.size() || text[op + 1] != '=')
    throw InputError("<command line>", 1, 1, "--target " + text + ": expected METRIC<=VALUE or METRIC>=VALUE");
  t.metric = text.substr(0, op);
  t.at_most = text[op] == '<';
  if (std::find(metrics.begin(), metrics.end(), t.metric) == metrics.end())
    throw InputError("<command line>", 1, 1,
                     "--target " + text + ": unknown metric '" + t.metric +
                         "' (training: time_to_train_days, time_to_train_hours, tokens_per_s, cost_usd; job traces: "
                         "mean_jct_hours, p95_jct_hours, mean_wait_hours, p95_wait_hours, cost_usd)");
  char* end = nullptr;
  const std::string number = text.substr(op + 2);
  t.value = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || !std::isfinite(t.value) || t.value <= 0)
    throw InputError("<command line>", 1, 1, "--target " + text + ": the value must be a positive number");
  return t;
}

double CapacityCandidate::metric(const std::string& name) const
{
  if (name == "time_to_train_days")
    return time_to_train_s / 86400;
  if (name == "time_to_train_hours")
    return time_to_train_s / 3600;
  if (name == "tokens_per_s")
    return tokens_per_s;
  return cost_usd;
}

namespace {

// The long run of a planned composition, when the scenario has failures and checkpoints: its ETTR over the
// failure-free time to train (at least a day, at most ten years), the interval as the scenario gives it or optimal.
void count_failures(const Scenario& composed, int gpus, CapacityCandidate& c, double tokens_per_iteration)
{
  const auto& params = workload_as<TrainingWorkload>(composed).params;
  if (!composed.cluster.failures.enabled() || !params.checkpoint.given || composed.cluster.storage.bandwidth.value <= 0)
    return;
  Scenario s = composed;
  s.cluster.nodes = std::max(1, gpus / s.cluster.gpus_per_node);
  s.cluster.gpus = s.cluster.nodes * s.cluster.gpus_per_node;
  const CheckpointCost cost = checkpoint_cost(s, total_parameters(params.model));
  StepRun step; // the plan's estimate, not a run of its step
  step.iteration_s = c.plan.iteration_s;
  step.tokens_per_step = tokens_per_iteration;
  LongRunSetup setup = long_run_setup(s, step, cost, std::clamp(c.time_to_train_s / 86400, 1.0, 3650.0));
  // A given interval shorter than this composition's write (goodput refuses it) becomes the write: one composition's
  // slow storage path must not stop the search over the others.
  setup.interval_s = std::max(params.checkpoint.interval.value, cost.durable_s);
  constexpr int kSeeds = 10;
  const GoodputResult r = params.checkpoint.optimal ? best_interval(setup, kSeeds) : estimate_long_run(setup, kSeeds);
  c.ettr = r.ettr.mean;
  c.ettr_ci95 = r.ettr.half;
  c.spares = setup.spares;
}

// The fastest plan of one composition (device, GPU count, NICs, oversubscription) and what it costs.
CapacityCandidate candidate(const Scenario& s, const std::string& device, int gpus, double usd_per_gpu_hour,
                            double tokens_per_iteration, const CapacityOptions& o)
{
  CapacityCandidate c;
  c.device = device;
  c.gpus = gpus;
  c.nics_per_node = s.cluster.network.nics_per_node;
  c.oversubscription = s.cluster.network.levels.front().oversubscription;
  c.usd_per_gpu_hour = usd_per_gpu_hour;
  PlanOptions po;
  po.gpus = gpus;
  po.top = 1;
  po.jobs = o.jobs;
  try {
    const PlanSearch search = search_plans(s, po);
    if (!search.best.empty()) {
      c.planned = true;
      c.plan = search.best.front();
      c.tokens_per_s = tokens_per_iteration / c.plan.iteration_s;
      c.time_to_train_s = o.tokens / c.tokens_per_s;
      count_failures(s, gpus, c, tokens_per_iteration);
      c.tokens_per_s *= c.ettr;
      c.time_to_train_s /= c.ettr;
      const int spare_gpus = c.spares * s.cluster.gpus_per_node;
      c.cost_usd =
          composition_usd_per_hour(s.cluster, gpus + spare_gpus, usd_per_gpu_hour, o) * c.time_to_train_s / 3600;
    }
  } catch (const std::invalid_argument&) {
    // no plan for this composition (e.g. the batch does not divide): left unplanned
  }
  return c;
}

} // namespace

double fabric_switch_ports(const ClusterParams& cluster, int nodes)
{
  ClusterParams c = cluster;
  c.nodes = nodes;
  const PlatformSpec p = build_platform_spec(c, *DeviceCatalog::builtin().find(c.device));
  const double port = c.network.nic_bandwidth.value * c.network.nic_efficiency;
  double ports = 0;
  for (const auto& link : p.topology.links())
    if (link.tier == "nic")
      ports += 1;
    else if (link.tier.ends_with("-uplink"))
      ports += 2 * std::ceil(link.bandwidth / port - 1e-9);
  return ports;
}

double composition_usd_per_hour(const ClusterParams& cluster, int gpus, double usd_per_gpu_hour,
                                const CapacityOptions& o)
{
  const int nodes = std::max(1, gpus / cluster.gpus_per_node);
  const double ports = o.usd_per_port_hour > 0 ? fabric_switch_ports(cluster, nodes) : 0;
  return gpus * usd_per_gpu_hour + static_cast<double>(nodes) * cluster.network.nics_per_node * o.usd_per_nic_hour +
         ports * o.usd_per_port_hour;
}

std::map<std::string, double> capacity_prices(const CapacityOptions& o)
{
  std::map<std::string, double> prices;
  for (const auto& p : gpu_prices())
    prices[p.device] = p.usd_per_gpu_hour;
  for (const auto& [d, usd] : o.prices)
    prices[d] = usd;
  return prices;
}

void for_each_composition(const Scenario& base, const CapacityOptions& o, bool need_profile,
                          const std::function<void(const Scenario&, const std::string&, int, int, double)>& visit)
{
  const std::map<std::string, double> prices = capacity_prices(o);
  std::vector<std::string> devices = o.devices;
  if (devices.empty())
    for (const auto& [d, usd] : prices)
      devices.push_back(d);
  for (const auto& device : devices) {
    const DeviceSpec* spec = DeviceCatalog::builtin().find(device);
    if (!spec || spec->kind != "gpu" || (need_profile && !builtin_profile(device)))
      throw InputError("<command line>", 1, 1, "--devices: '" + device + "' is not a GPU with a shipped profile");
    if (!prices.count(device))
      throw InputError("<command line>", 1, 1,
                       "no price for " + device + ": give one with --price " + device + "=USD_PER_GPU_HOUR");
    Scenario s = base; // the same shape of node (GPUs per node, NICs), on this device
    s.cluster.device = device;
    s.cluster.profile.clear();
    s.cluster.intra_node.bandwidth.value = 0; // the device's own links
    s.cluster.intra_node.nvls = s.cluster.intra_node.nvls && spec->nvls;
    const int per_node = s.cluster.gpus_per_node;
    const std::vector<int> nics =
        o.nics_per_node.empty() ? std::vector<int>{s.cluster.network.nics_per_node} : o.nics_per_node;
    const std::vector<double> oversub = o.oversubscription.empty()
                                            ? std::vector<double>{s.cluster.network.levels.front().oversubscription}
                                            : o.oversubscription;
    for (int gpus = std::max(o.min_gpus, per_node); gpus <= o.max_gpus; gpus *= 2)
      for (int n : nics)
        for (double ratio : oversub) {
          Scenario composed = s;
          composed.cluster.network.nics_per_node = n;
          if (composed.cluster.network.levels.size() > 1) // the top level has no uplinks to oversubscribe
            composed.cluster.network.levels.front().oversubscription = ratio;
          visit(composed, device, gpus, n, ratio);
        }
  }
}

std::vector<CapacityCandidate> plan_capacity(const Scenario& base, const CapacityOptions& o)
{
  const auto* training = dynamic_cast<const TrainingWorkload*>(base.workload.get());
  if (!training || !training->params.model.graph.empty())
    throw base.source.error_at("workload.kind", "plan-capacity needs a transformer-training scenario (not a layer "
                                                "graph)");
  const auto& w = training->params;
  const double tokens_per_iteration = double(w.batch.global) * w.model.seq;
  const auto prices = capacity_prices(o);
  std::vector<CapacityCandidate> out;
  for_each_composition(base, o, true, [&](const Scenario& s, const std::string& device, int gpus, int, double) {
    out.push_back(candidate(s, device, gpus, prices.at(device), tokens_per_iteration, o));
  });
  for (auto& c : out) {
    if (!c.planned)
      continue;
    const double v = c.metric(o.target.metric);
    c.meets_target = o.target.at_most ? v <= o.target.value : v >= o.target.value;
    c.on_frontier = std::none_of(out.begin(), out.end(), [&](const CapacityCandidate& d) {
      return d.planned && d.cost_usd <= c.cost_usd && d.time_to_train_s <= c.time_to_train_s &&
             (d.cost_usd < c.cost_usd || d.time_to_train_s < c.time_to_train_s);
    });
  }
  return out;
}

} // namespace cs
