// `clustersim plan-capacity`: the cheapest GPU type and count (with its best parallel plan) that trains a token
// budget within a target, or whose replay of a job trace meets a JCT or queueing target; the cost frontier as a
// table, frontier.csv and a plot.
#include "sim/cli/command.hpp"
#include "sim/cli/output_files.hpp"

#include "base/input_error.hpp"
#include "base/units.hpp"
#include "sim/plan/capacity.hpp"
#include "sim/plan/gpu_prices.hpp"
#include "sim/plan/job_capacity.hpp"
#include "sim/plan/simulation_pool.hpp"
#include "sim/report/gnuplot.hpp"
#include "sim/run/scenario_checks.hpp"
#include "workloads/training/training_workload.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iostream>

namespace cs {
namespace {

struct CapacityArgs {
  std::string scenario, target, out_dir;
  double tokens = 0;
  std::vector<std::string> devices, prices, sets;
  int min_gpus = 0, max_gpus = 1024;
  int jobs = 0; // plans simulated side by side; 0 = default_plan_jobs()
  std::vector<int> nics;
  std::vector<double> oversubscription;
  double nic_price = -1, port_price = -1; // -1: not given (the scenario's prices block, else 0)
};

std::string frontier_csv(const std::vector<CapacityCandidate>& cs)
{
  std::string out =
      "device,gpus,nics_per_node,oversubscription,planned,dp,tp,pp,micro,schedule,recompute,zero,"
      "usd_per_gpu_hour,tokens_per_s,time_to_train_days,cost_usd,on_frontier,meets_target,ettr,ettr_ci95,spares\n";
  for (const auto& c : cs)
    out += fmt::format("{},{},{},{:g},{},{},{},{},{},{},{},{},{:.4f},{:.6g},{:.6g},{:.6g},{},{},{:.6g},{:.3g},{}\n",
                       c.device, c.gpus, c.nics_per_node, c.oversubscription, c.planned ? 1 : 0, c.plan.parallel.dp,
                       c.plan.parallel.tp, c.plan.parallel.pp, c.plan.micro, c.plan.schedule,
                       recompute_name(c.plan.recompute), c.plan.parallel.zero, c.usd_per_gpu_hour, c.tokens_per_s,
                       c.time_to_train_s / 86400, c.cost_usd, c.on_frontier ? 1 : 0, c.meets_target ? 1 : 0, c.ettr,
                       c.ettr_ci95, c.spares);
  return out;
}

/** One point of a frontier plot: its device (one line each), cost, the time it is plotted against, a label. */
struct FrontierPoint {
  std::string device;
  double x = 0, cost = 0;
  int gpus = 0;
};

std::string frontier_plot(const std::vector<FrontierPoint>& points, const std::string& title, const std::string& xlabel)
{
  std::vector<std::string> devices;
  for (const auto& p : points)
    if (std::find(devices.begin(), devices.end(), p.device) == devices.end())
      devices.push_back(p.device);
  std::string data, plot = "plot ";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    data += fmt::format("$d{} << EOD\n", i);
    for (const auto& p : points)
      if (p.device == devices[i])
        data += fmt::format("{:.6g} {:.6g} \"{}\"\n", p.x, p.cost, p.gpus);
    data += "EOD\n";
    plot += fmt::format("$d{0} using 1:2 with linespoints pt 7 title {1}, $d{0} using 1:2:3 with labels offset 0,1 "
                        "notitle{2}",
                        i, gnuplot_quote(devices[i]), i + 1 < devices.size() ? ", " : "\n");
  }
  // A log axis only where the points span more than tenfold: over a narrower range it squeezed every point into a
  // corner, their labels over each other.
  std::vector<double> xs, costs;
  for (const auto& p : points) {
    xs.push_back(p.x);
    costs.push_back(p.cost);
  }
  const std::string logs = gnuplot_log_axes(xs, costs);
  const std::string body = fmt::format("set title {}\nset xlabel {}\nset ylabel \"cost (USD)\"\n{}"
                                       "set grid\nset key outside right\nset offsets graph 0.05, graph 0.05, graph "
                                       "0.1, graph 0.05\n",
                                       gnuplot_quote(title), gnuplot_quote(xlabel), logs);
  return data + "set terminal pngcairo size 1000,600 noenhanced\nset output \"{DIR}/frontier.png\"\n" + body + plot +
         "set terminal svg size 1000,600 noenhanced\nset output \"{DIR}/frontier.svg\"\nreplot\nset output\n";
}

std::string frontier_plot(const std::vector<CapacityCandidate>& cs, double tokens)
{
  std::vector<FrontierPoint> points;
  for (const auto& c : cs)
    if (c.planned)
      points.push_back({c.device, c.time_to_train_s / 86400, c.cost_usd, c.gpus});
  return frontier_plot(points, fmt::format("Cost and time to train {:.3g} tokens (labels: GPUs)", tokens),
                       "days to train");
}

std::string job_frontier_csv(const std::vector<JobCapacityCandidate>& cs)
{
  std::string out = "device,gpus,nics_per_node,oversubscription,ran,usd_per_gpu_hour,mean_jct_hours,p95_jct_hours,"
                    "mean_wait_hours,p95_wait_hours,makespan_days,gpu_utilization,cost_usd,on_frontier,meets_target\n";
  for (const auto& c : cs)
    out += fmt::format("{},{},{},{:g},{},{:.4f},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.4f},{:.6g},{},{}\n", c.device,
                       c.gpus, c.nics_per_node, c.oversubscription, c.ran ? 1 : 0, c.usd_per_gpu_hour,
                       c.mean_jct_s / 3600, c.p95_jct_s / 3600, c.mean_wait_s / 3600, c.p95_wait_s / 3600,
                       c.makespan_s / 86400, c.utilization, c.cost_usd, c.on_frontier ? 1 : 0, c.meets_target ? 1 : 0);
  return out;
}

std::string job_frontier_plot(const std::vector<JobCapacityCandidate>& cs, const std::string& name)
{
  std::vector<FrontierPoint> points;
  for (const auto& c : cs)
    if (c.ran)
      points.push_back({c.device, c.mean_jct_s / 3600, c.cost_usd, c.gpus});
  return frontier_plot(points, "Cost and mean JCT of " + name + " (labels: GPUs)", "mean JCT (hours)");
}

// gpu-jobs: every composition's replay, the cheapest that meets the target, frontier.csv and the plot.
int job_capacity_command(const CapacityArgs& a, const Scenario& base, const CapacityOptions& o)
{
  const auto candidates = plan_job_capacity(base, o);
  std::cout << fmt::format("clustersim plan-capacity for {}: job trace, target {}\n", base.name, a.target);
  std::cout << fmt::format("  {:<16} {:>6} {:>4} {:>7} {:>9} {:>10} {:>11} {:>10} {:>6} {:>12}  {}\n", "device", "GPUs",
                           "NICs", "oversub", "$/GPU-h", "JCT (h)", "p95 wait(h)", "span (d)", "busy", "cost (USD)",
                           "");
  const JobCapacityCandidate* best = nullptr;
  for (const auto& c : candidates) {
    if (!c.ran) {
      std::cout << fmt::format("  {:<16} {:>6} {:>4} {:>7g}  not run: {}\n", c.device, c.gpus, c.nics_per_node,
                               c.oversubscription, c.why);
      continue;
    }
    if (c.meets_target && (!best || c.cost_usd < best->cost_usd))
      best = &c;
    std::cout << fmt::format("  {:<16} {:>6} {:>4} {:>7g} {:>9.3f} {:>10.4g} {:>11.4g} {:>10.4g} {:>5.1f}% "
                             "{:>12}  {}{}\n",
                             c.device, c.gpus, c.nics_per_node, c.oversubscription, c.usd_per_gpu_hour,
                             c.mean_jct_s / 3600, c.p95_wait_s / 3600, c.makespan_s / 86400, 100 * c.utilization,
                             units::format_money(c.cost_usd), c.on_frontier ? "frontier" : "",
                             c.meets_target ? " meets target" : "");
  }
  if (best)
    std::cout << fmt::format("  cheapest meeting the target: {} x {}, mean JCT {:.4g} h, p95 wait {:.4g} h, {}\n",
                             best->gpus, best->device, best->mean_jct_s / 3600, best->p95_wait_s / 3600,
                             units::format_money(best->cost_usd));
  else
    std::cout << "  no configuration meets the target (raise --max-gpus or relax it)\n";
  if (!a.out_dir.empty()) {
    auto files = render_gnuplot(job_frontier_plot(candidates, base.name), {"frontier.png", "frontier.svg"});
    files.emplace_back("frontier.csv", job_frontier_csv(candidates));
    write_output_set(a.out_dir, files);
    std::cout << fmt::format("  outputs   {}/ (frontier.csv, frontier.png, frontier.svg)\n", a.out_dir);
  }
  return best ? 0 : 1;
}

int plan_capacity_command(const CapacityArgs& a)
{
  Scenario base = load_scenario(a.scenario, a.sets);
  check_scenario(base);
  CapacityOptions o;
  o.target = parse_capacity_target(a.target);
  const bool jobs = base.kind == "gpu-jobs";
  if (jobs != is_job_capacity_metric(o.target.metric) && o.target.metric != "cost_usd")
    throw InputError("<command line>", 1, 1,
                     "--target " + a.target + ": " +
                         (jobs ? "a job trace takes mean_jct_hours, p95_jct_hours, mean_wait_hours, p95_wait_hours or "
                                 "cost_usd"
                               : "a training scenario takes time_to_train_days, time_to_train_hours, tokens_per_s or "
                                 "cost_usd"));
  o.tokens = a.tokens;
  if (const auto* t = dynamic_cast<const TrainingWorkload*>(base.workload.get()); t && o.tokens <= 0)
    o.tokens = t->params.tokens;
  if (!jobs && !(o.tokens > 0))
    throw InputError("<command line>", 1, 1, "plan-capacity needs a token budget: --tokens N or workload.tokens");
  o.devices = a.devices;
  o.min_gpus = a.min_gpus;
  o.jobs = a.jobs > 0 ? a.jobs : default_plan_jobs();
  o.max_gpus = a.max_gpus;
  o.nics_per_node = a.nics;
  o.oversubscription = a.oversubscription;
  o.usd_per_nic_hour = a.nic_price >= 0 ? a.nic_price : base.prices.nic_hour;
  o.usd_per_port_hour = a.port_price >= 0 ? a.port_price : base.prices.switch_port_hour;
  for (const auto& p : base.prices.gpu_hour) // the scenario's prices, then --price over them
    o.prices[p.device] = p.usd;
  for (const auto& p : a.prices) {
    const auto eq = p.find('=');
    char* end = nullptr;
    const double usd = eq == std::string::npos ? 0 : std::strtod(p.c_str() + eq + 1, &end);
    if (eq == std::string::npos || eq == 0 || !(usd > 0) || !std::isfinite(usd) || *end != '\0')
      throw InputError("<command line>", 1, 1, "--price " + p + ": expected DEVICE=USD_PER_GPU_HOUR");
    o.prices[p.substr(0, eq)] = usd;
  }
  if (!a.out_dir.empty())
    check_output_dir(a.out_dir);
  if (jobs)
    return job_capacity_command(a, base, o);
  const auto candidates = plan_capacity(base, o);
  std::cout << fmt::format("clustersim plan-capacity for {}: {:.3g} tokens, target {}\n", base.name, o.tokens,
                           a.target);
  std::cout << fmt::format("  {:<16} {:>6} {:>4} {:>6}  {:<26} {:>9} {:>12} {:>10} {:>14}  {}\n", "device", "GPUs",
                           "NICs", "oversub", "plan (dp tp pp micro)", "$/GPU-h", "tokens/s", "days", "cost (USD)", "");
  const CapacityCandidate* best = nullptr;
  for (const auto& c : candidates) {
    if (!c.planned) {
      std::cout << fmt::format("  {:<16} {:>6} {:>4} {:>6g}  no plan fits\n", c.device, c.gpus, c.nics_per_node,
                               c.oversubscription);
      continue;
    }
    if (c.meets_target && (!best || c.cost_usd < best->cost_usd))
      best = &c;
    std::cout << fmt::format(
        "  {:<16} {:>6} {:>4} {:>6g}  {:<26} {:>9.3f} {:>12} {:>10.3g} {:>14}  {}{}\n", c.device, c.gpus,
        c.nics_per_node, c.oversubscription,
        fmt::format("{} {} {} {}{}", c.plan.parallel.dp, c.plan.parallel.tp, c.plan.parallel.pp, c.plan.micro,
                    c.plan.parallel.zero ? fmt::format(" zero{}", c.plan.parallel.zero) : ""),
        c.usd_per_gpu_hour, units::format_count(c.tokens_per_s), c.time_to_train_s / 86400,
        units::format_money(c.cost_usd), c.on_frontier ? "frontier" : "", c.meets_target ? " meets target" : "");
    if (c.ettr < 1)
      std::cout << fmt::format(
          "  {:<16} {:>6} failures and checkpoints: ETTR {:.1f}% ± {:.1f} ({} spare nodes priced); "
          "tokens/s, days and cost are expected values\n",
          "", "", 100 * c.ettr, 100 * c.ettr_ci95, c.spares);
  }
  if (best)
    std::cout << fmt::format("  cheapest meeting the target: {} x {} (dp {} tp {} pp {}), {:.3g} days, {}\n",
                             best->gpus, best->device, best->plan.parallel.dp, best->plan.parallel.tp,
                             best->plan.parallel.pp, best->time_to_train_s / 86400,
                             units::format_money(best->cost_usd));
  else
    std::cout << "  no configuration meets the target (raise --max-gpus or relax it)\n";
  if (!a.out_dir.empty()) {
    auto files = render_gnuplot(frontier_plot(candidates, o.tokens), {"frontier.png", "frontier.svg"});
    files.emplace_back("frontier.csv", frontier_csv(candidates));
    write_output_set(a.out_dir, files);
    std::cout << fmt::format("  outputs   {}/ (frontier.csv, frontier.png, frontier.svg)\n", a.out_dir);
  }
  return best ? 0 : 1;
}

} // namespace

std::vector<Command> add_capacity_commands(CLI::App& app)
{
  auto a = std::make_shared<CapacityArgs>();
  auto* cmd = app.add_subcommand("plan-capacity", "the cheapest GPU type and count (with its best parallel plan) "
                                                  "that trains --tokens, or replays a job trace, within --target");
  cmd->add_option("scenario", a->scenario,
                  "transformer-training scenario (its model, batch and node shape) or gpu-jobs scenario (its trace)")
      ->required();
  cmd->add_option("--tokens", a->tokens, "token budget to train (default: the scenario's workload.tokens)")
      ->check(CLI::Range(1.0, 1e16));
  cmd->add_option("--target", a->target,
                  "e.g. time_to_train_days<=30, tokens_per_s>=1e6, cost_usd<=5e5; job traces: p95_wait_hours<=1, "
                  "mean_jct_hours<=12")
      ->required();
  cmd->add_option("--devices", a->devices, "candidate GPUs (default: every GPU in the price table)")->delimiter(',');
  cmd->add_option("--price", a->prices, "DEVICE=USD per GPU-hour, overriding or adding to the table (repeatable)");
  cmd->add_option("--min-gpus", a->min_gpus, "smallest cluster tried (default one node)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-gpus", a->max_gpus, "largest cluster tried (default 1024)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--nics-per-node", a->nics, "NICs per node to try, e.g. 4,8 (default: the scenario's)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--oversubscription", a->oversubscription,
                  "leaf-level fabric oversubscription to try, e.g. 1,2,4 (default: the scenario's)")
      ->delimiter(',')
      ->check(CLI::Range(1.0, 1000.0));
  cmd->add_option("--nic-price", a->nic_price,
                  "USD per NIC-hour added to the cost (default: the scenario's prices.nic_hour, else 0)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--port-price", a->port_price,
                  "USD per switch-port-hour of the fabric (default: the scenario's prices.switch_port_hour, else 0)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option(
         "--jobs", a->jobs,
         "plans simulated side by side in each composition's search (default: one per core, at most 8); the answer "
         "does not depend on it")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--set", a->sets, "override a key of the scenario (repeatable)");
  cmd->add_option("--out", a->out_dir, "also write frontier.csv and frontier.png/svg");
  return {{cmd, [a] { return plan_capacity_command(*a); }}};
}

} // namespace cs
