#include "sim/cli/plan_command.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/output_files.hpp"
#include "sim/cli/progress_reporter.hpp"

#include "base/input_error.hpp"
#include "base/registry.hpp"
#include "base/units.hpp"
#include "core/common_metrics.hpp"
#include "models/devices/device_catalog.hpp"
#include "models/moe/token_dispatcher.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/plan/own_plan.hpp"
#include "sim/plan/planner.hpp"
#include "sim/plan/simulation_pool.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/run/scenario_run.hpp"
#include "workloads/training/training_workload.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

namespace cs {

namespace {

// The recomputation column's text: the mode, and for selective the modules searched.
std::string recompute_label(const Plan& p)
{
  std::string out = recompute_name(p.recompute);
  if (!p.recompute_modules.empty())
    out += ":" + fmt::format("{}", fmt::join(p.recompute_modules, "+"));
  return out;
}

// The stage-layers column's text: each stage's layer count, "-" without a partition of its own.
std::string layers_label(const Plan& p)
{
  return p.stage_layers.empty() ? "-" : fmt::format("{}", fmt::join(p.stage_layers, "/"));
}

// Column widths that fit every plan shown.
struct ColumnWidths {
  std::size_t schedule = 20, recompute = 9, layers = 12; // at least the headers' "recompute" and "stage layers"
  bool orders = false;      // --placements: a pipelined plan's rank order follows its schedule
  bool dispatchers = false; // --dispatchers: an MoE plan's dispatcher follows its expert degrees
};

// The schedule column's text: the schedule and its virtual stages, the rank order under --placements, and for an MoE
// model the expert degrees (and under --dispatchers the dispatcher) before them.
std::string schedule_label(const Plan& p, bool moe, const ColumnWidths& w)
{
  std::string schedule =
      p.parallel.pp == 1 ? "-" : p.schedule + (p.parallel.vpp > 1 ? fmt::format(" v{}", p.parallel.vpp) : "");
  if (w.orders && p.parallel.pp > 1)
    schedule += fmt::format(" {}", placement_name(p.parallel.placement));
  if (moe) // expert parallelism rides with the schedule column (MoE models only)
    schedule =
        fmt::format("ep{}{}{} {}", p.parallel.ep,
                    p.parallel.etp > 0 && p.parallel.etp != p.parallel.tp ? fmt::format(" etp{}", p.parallel.etp) : "",
                    w.dispatchers ? " " + p.dispatcher : std::string(), schedule);
  return schedule;
}

// The ZeRO column's text: the stage, and "/rN" for N HSDP replicas of the sharded state.
std::string zero_label(const Plan& p)
{
  return p.parallel.dp_replicate > 1 ? fmt::format("{}/r{}", p.parallel.zero, p.parallel.dp_replicate)
                                     : std::to_string(p.parallel.zero);
}

std::string describe(const Plan& p, bool moe, const ColumnWidths& w)
{
  return fmt::format("{:>3} {:>3} {:>3} {:>3}  {:<{}} {:>5}  {:<{}} {:<10} {:>4}  {:<3}  {:<{}}", p.parallel.dp,
                     p.parallel.tp, p.parallel.cp, p.parallel.pp, schedule_label(p, moe, w), w.schedule, p.micro,
                     recompute_label(p), w.recompute, p.fp8, zero_label(p), p.parallel.sequence_parallel ? "yes" : "no",
                     layers_label(p), w.layers);
}

// --fp8: the recipes to search. "all" is none and every registered recipe the scenario's device can run.
std::vector<std::string> fp8_choices(const std::string& list, const Scenario& base)
{
  std::vector<std::string> out;
  if (list.empty())
    return out;
  const DeviceSpec& device = *DeviceCatalog::builtin().find(base.cluster.device);
  const std::vector<std::string> names = fp8_recipe_names();
  std::stringstream ss(list);
  for (std::string name; std::getline(ss, name, ',');) {
    if (name == "all") {
      out.push_back("none");
      for (const auto& recipe : names)
        if (make_fp8_recipe(recipe)->device_problem(device).empty())
          out.push_back(recipe);
      continue;
    }
    if (name != "none" && std::find(names.begin(), names.end(), name) == names.end())
      throw InputError("<command line>", 1, 1,
                       "--fp8 " + list + ": unknown recipe '" + name +
                           "' (expected none, all or one of: " + fmt::format("{}", fmt::join(names, ", ")) + ")");
    if (name != "none")
      if (const std::string problem = make_fp8_recipe(name)->device_problem(device); !problem.empty())
        throw InputError("<command line>", 1, 1, "--fp8 " + list + ": " + problem);
    if (std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(name);
  }
  return out;
}

// The plan table: one row per plan, its text columns as wide as their longest entry.
void print_plans(const std::vector<Plan>& plans, bool moe, bool orders, bool dispatchers)
{
  ColumnWidths w;
  w.orders = orders;
  w.dispatchers = dispatchers;
  for (const Plan& p : plans) {
    w.schedule = std::max(w.schedule, schedule_label(p, moe, w).size());
    w.recompute = std::max(w.recompute, recompute_label(p).size());
    w.layers = std::max(w.layers, layers_label(p).size());
  }
  std::cout << fmt::format("\n  {:>2}  {:>3} {:>3} {:>3} {:>3}  {:<{}} {:>5}  {:<{}} {:<10} {:>4}  {:<3}  {:<{}} "
                           "{:>11} {:>10} {:>8} {:>10}\n",
                           "#", "dp", "tp", "cp", "pp", "schedule", w.schedule, "micro", "recompute", w.recompute,
                           "fp8", "zero", "sp", "stage layers", w.layers, "iteration", "samples/s", "TFLOP/s",
                           "memory");
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const Plan& p = plans[i];
    std::cout << fmt::format("  {:>2}  {} {:>11} {:>10.1f} {:>8.1f} {:>10}\n", i + 1, describe(p, moe, w),
                             units::format_time(p.iteration_s), p.samples_per_s, p.tflops_per_gpu,
                             units::format_bytes(p.memory_bytes));
  }
}

// The best `count` plans' iteration times on the simgrid backend: one SimGrid engine per process, `jobs` at a time.
std::vector<std::string> confirm_on_simgrid(const Scenario& base, int gpus, const std::vector<Plan>& best, int count,
                                            int jobs)
{
  std::vector<std::function<std::string()>> confirmations;
  for (int i = 0; i < count; ++i)
    confirmations.emplace_back([&base, gpus, &best, i] {
      Scenario s = plan_scenario(base, gpus, best[static_cast<std::size_t>(i)]);
      s.backend = Backend::SIMGRID;
      return fmt::format("{:.17g}", run_scenario(s, RunOptions{}).metrics.at(metric::iteration_time_s));
    });
  return run_isolated_all(confirmations, jobs);
}

// --dispatchers: the MoE token dispatchers to search; "all" is every registered one. A dense model has none to choose.
std::vector<std::string> dispatcher_choices(const std::string& list, const Scenario& base)
{
  std::vector<std::string> out;
  if (list.empty())
    return out;
  if (!workload_as<TrainingWorkload>(base).params.model.moe.enabled())
    throw InputError("<command line>", 1, 1, "--dispatchers " + list + ": the model has no experts to dispatch to");
  const auto& registry = Registry<TokenDispatcher>::instance();
  std::stringstream ss(list);
  for (std::string name; std::getline(ss, name, ',');) {
    const std::vector<std::string> names = name == "all" ? registry.names() : std::vector<std::string>{name};
    for (const auto& n : names) {
      if (!registry.has(n))
        throw InputError("<command line>", 1, 1,
                         "--dispatchers " + list + ": unknown dispatcher '" + n +
                             "' (expected all or one of: " + registry.joined_names() + ")");
      if (std::find(out.begin(), out.end(), n) == out.end())
        out.push_back(n);
    }
  }
  return out;
}

// The search's options from the command line; a memory limit that is no positive size is bad input.
PlanOptions plan_options(const PlanCommand& c, const Scenario& base)
{
  PlanOptions options;
  options.gpus = c.gpus;
  options.top = c.top;
  options.exhaustive = c.exhaustive;
  options.jobs = c.jobs > 0 ? c.jobs : default_plan_jobs();
  options.fp8 = fp8_choices(c.fp8, base);
  options.search_recompute_modules = c.recompute_modules;
  options.search_placement = c.placements;
  options.dispatchers = dispatcher_choices(c.dispatchers, base);
  options.search_hsdp = c.hsdp;
  if (!c.memory_limit.empty()) {
    std::string error;
    auto bytes = units::parse_bytes(c.memory_limit, &error);
    if (!bytes || !(*bytes > 0))
      throw InputError("<command line>", 1, 1,
                       "--memory-limit " + c.memory_limit + ": " + (error.empty() ? "must be a positive size" : error));
    options.memory_limit = *bytes;
  }
  return options;
}

} // namespace

int command_plan(const PlanCommand& c)
{
  const auto start = std::chrono::steady_clock::now();
  Scenario base = load_scenario(c.scenario, c.sets);
  check_scenario(base);
  if (!c.out_dir.empty())
    check_output_dir(c.out_dir);
  const PlanOptions options = plan_options(c, base);
  // Run on as many GPUs as it plans for, the scenario's own plan is timed beside the search and set beside the best
  // one; when it is faster the line says why the search missed it.
  std::optional<OwnPlanTiming> own_timing;
  if (static_cast<long long>(base.cluster.nodes) * base.cluster.gpus_per_node == c.gpus)
    own_timing.emplace(base);
  PlanSearch search;
  try {
    ProgressReporter progress("clustersim plan " + base.name); // large MoE searches take minutes
    search = search_plans(base, options);
  } catch (const std::invalid_argument& e) {
    throw InputError("<command line>", 1, 1, e.what());
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool moe = workload_as<TrainingWorkload>(base).params.model.moe.enabled();
  const std::string title = "clustersim plan — {} on {} GPUs ({} per GPU after the {:.0f}% memory reserve)\n";
  std::cout << fmt::format(fmt::runtime(title), base.name, c.gpus, units::format_bytes(search.budget_bytes),
                           100 * search.memory_reserve);
  std::cout << fmt::format(
      "  {} plans enumerated: {} refused by the scenario checks, {} over memory, {} pruned by the "
      "compute bound ({} timelines), {} simulated (analytical{}){} in {:.2f} s ({:.2f} s bounding)\n",
      search.enumerated, search.invalid, search.over_memory, search.pruned_by_bound, search.timeline_bounded,
      search.simulated, options.jobs > 1 ? fmt::format(", {} at a time", options.jobs) : "",
      search.timed_as_twin > 0 ? fmt::format(", {} timed as a twin", search.timed_as_twin) : "", wall,
      search.bounding_wall_s);
  if (search.best.empty()) {
    std::cout << "  no plan fits in memory\n";
    return 1;
  }
  print_plans(search.best, moe, options.search_placement, !options.dispatchers.empty());
  // Which rank order the pipelined plans ran in, and how to try the other.
  const auto pipelined =
      std::find_if(search.best.begin(), search.best.end(), [](const Plan& p) { return p.parallel.pp > 1; });
  if (!options.search_placement && pipelined != search.best.end()) {
    const Placement order = pipelined->parallel.placement;
    std::cout << fmt::format("\n  rank order {} (the scenario's) for every plan; --placements also tries {}\n",
                             placement_name(order), placement_name(other_placement(order)));
  }
  if (own_timing)
    std::cout << "\n" << own_plan_line(own_plan(base, options, search.budget_bytes, &*own_timing), search.best.front());
  std::string csv = "rank,dp,tp,pp,vpp,schedule,micro,recompute,zero,sequence_parallel,stage_layers,iteration_time_s,"
                    "throughput_samples_per_s,tflops_per_gpu,memory_bytes,simgrid_iteration_time_s,ep,etp,cp,fp8,"
                    "recompute_modules,placement,dispatcher,dp_replicate\n";
  const int confirm = std::min<int>(c.confirm, static_cast<int>(search.best.size()));
  if (confirm > 0)
    std::cout << "\n  confirmed on the simgrid backend:\n";
  const std::vector<std::string> confirmed = confirm_on_simgrid(base, c.gpus, search.best, confirm, options.jobs);
  for (std::size_t i = 0; i < search.best.size(); ++i) {
    const Plan& p = search.best[i];
    double simgrid = -1;
    if (static_cast<int>(i) < confirm) {
      simgrid = std::stod(confirmed[i]);
      std::cout << fmt::format("  {:>2}  simgrid {}  analytical {}  ({:+.1f}%)\n", i + 1, units::format_time(simgrid),
                               units::format_time(p.iteration_s), 100 * (p.iteration_s / simgrid - 1));
    }
    std::string layers;
    for (int l : p.stage_layers)
      layers += (layers.empty() ? "" : " ") + std::to_string(l);
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{},{},{},{},{},{},{},{},{}\n",
                       i + 1, p.parallel.dp, p.parallel.tp, p.parallel.pp, p.parallel.vpp, p.schedule, p.micro,
                       recompute_name(p.recompute), p.parallel.zero, p.parallel.sequence_parallel ? 1 : 0, layers,
                       p.iteration_s, p.samples_per_s, p.tflops_per_gpu, p.memory_bytes,
                       simgrid > 0 ? fmt::format("{:.9g}", simgrid) : std::string(), p.parallel.ep,
                       p.parallel.etp > 0 ? p.parallel.etp : p.parallel.tp, p.parallel.cp, p.fp8,
                       fmt::format("{}", fmt::join(p.recompute_modules, " ")), placement_name(p.parallel.placement),
                       p.dispatcher, p.parallel.dp_replicate);
  }
  if (!c.out_dir.empty()) {
    const std::string yaml = plan_scenario_yaml(base, c.gpus, search.best.front());
    write_output_set(c.out_dir, {{"plans.csv", csv}, {"best.yaml", yaml}});
    std::cout << fmt::format("\n  outputs   {}/ (plans.csv, best.yaml: the best plan as a scenario)\n", c.out_dir);
  }
  return 0;
}

std::vector<Command> add_plan_commands(CLI::App& app)
{
  auto c = std::make_shared<PlanCommand>();
  auto* planner = app.add_subcommand("plan", "search DP x TP x PP x microbatch x schedule x recomputation plans for a "
                                             "scenario on N GPUs (analytical backend) and print the best");
  planner->add_option("scenario", c->scenario, "transformer-training scenario YAML")->required();
  planner->add_option("--gpus", c->gpus, "GPUs to plan for (whole nodes, or a part of one node; at most 1048576)")
      ->required()
      ->check(CLI::Range(1, 1 << 20));
  planner->add_option("--memory-limit", c->memory_limit, "memory per GPU, e.g. 40GiB (default: the device's)");
  planner->add_option("--top", c->top, "plans to print (default 5)")->check(CLI::Range(1, 1000));
  planner->add_option("--confirm", c->confirm, "re-run the best N plans on the simgrid backend")
      ->check(CLI::Range(0, 1000));
  planner->add_flag("--exhaustive", c->exhaustive, "simulate every plan that fits (no bound pruning)");
  planner
      ->add_option(
          "--jobs", c->jobs,
          "plans simulated side by side, each in a child process (default: one per core, at most 8); the best plans "
          "do not depend on it, the counts of simulated and pruned plans may")
      ->check(CLI::Range(1, 1024));
  planner->add_flag("--recompute-modules", c->recompute_modules,
                    "search selective recomputation over sets of Megatron-Core's recompute modules (core_attn, "
                    "layernorm, mlp, both; for MoE moe_act with and without layernorm, layernorm with moe, and MLA's "
                    "mla_up_proj; for dense models torchtitan's op_sac)");
  planner->add_flag("--placements", c->placements,
                    "search pipelined plans in both rank orders: tp-pp-dp (a replica's stages together) and tp-dp-pp "
                    "(Megatron-Core's default, the pipeline outermost); default: the scenario's order only");
  planner->add_flag("--hsdp", c->hsdp,
                    "also search plans with ZeRO as HSDP (parallel.dp_replicate): shards over the data-parallel "
                    "replicas of one node, two nodes, four, ..., all-reduced across the groups; default: shard over "
                    "every replica");
  planner->add_option("--fp8", c->fp8,
                      "FP8 recipes to search, comma-separated: none (bf16 GEMMs), a recipe (tensorwise, delayed, "
                      "blockwise, mxfp8), or all (none and every recipe the device runs); default: the scenario's");
  planner->add_option("--dispatchers", c->dispatchers,
                      "MoE token dispatchers to search, comma-separated (alltoall, allgather, deepep, hybridep) or "
                      "all; default: the scenario's");
  planner->add_option("--set", c->sets, "override a key of the scenario (repeatable)");
  planner->add_option("--out", c->out_dir, "also write plans.csv and best.yaml (the best plan as a scenario)");
  return {{planner, [c] { return command_plan(*c); }}};
}

} // namespace cs
