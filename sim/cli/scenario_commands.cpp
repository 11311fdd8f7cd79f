// `clustersim run` and `clustersim validate`.
#include "base/input_error.hpp"
#include "core/task_graph.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/output_files.hpp"
#include "sim/cli/progress_reporter.hpp"
#include "sim/report/run_plots.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/run/scenario_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/sweep_spec.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <optional>

namespace fs = std::filesystem;

namespace cs {
namespace {

Scenario load_checked(const std::string& path, const std::vector<std::string>& sets)
{
  Scenario s = load_scenario(path, sets);
  check_scenario(s);
  SweepSpec sweep; // run ignores a sweep: block, but a malformed one is still bad input
  read_sweep_block(sweep, s.sweep, path);
  return s;
}

struct RunArgs {
  std::string scenario, out_dir, backend;
  std::vector<std::string> sets;
  long long seed = -1;
  std::size_t max_tasks = TaskGraph::kDefaultTaskLimit;
  bool trace = false, quiet = false, plots = false;
  std::string replicas = "auto";
};

int run(RunArgs a)
{
  if (!a.backend.empty())
    a.sets.push_back("backend=" + a.backend);
  if (a.seed >= 0)
    a.sets.push_back("seed=" + std::to_string(a.seed));
  TaskGraph::set_task_limit(a.max_tasks);
  const Scenario s = load_checked(a.scenario, a.sets);
  const fs::path out_dir = a.out_dir.empty() ? fs::path("out") / s.name : fs::path(a.out_dir);
  check_output_dir(out_dir.string());
  std::optional<ProgressReporter> progress(std::in_place, "clustersim run " + s.name, !a.quiet);
  RunOptions options;
  options.trace = a.trace || a.plots;
  options.replicas = a.replicas == "one"   ? ReplicaMode::ONE
                     : a.replicas == "all" ? ReplicaMode::ALL
                                           : ReplicaMode::AUTO;
  const RunResult result = run_scenario(s, options);
  const fs::path& dir = out_dir;
  std::vector<std::pair<std::string, std::string>> files{{"report.json", result.report.dump(2) + "\n"},
                                                         {"scenario.resolved.yaml", resolved_yaml(s)}};
  if (a.trace)
    files.emplace_back("trace.json", result.trace_json);
  files.insert(files.end(), result.files.begin(), result.files.end());
  if (a.plots)
    for (auto& f : run_plots(result))
      files.push_back(std::move(f));
  progress.reset(); // stop the progress line before the summary
  write_output_set(dir.string(), files);
  for (const auto& w : result.warnings) // even with --quiet: the input did something the user may not expect
    std::cerr << "clustersim: warning: " << w << "\n";
  if (!a.quiet)
    std::cout << result.summary << "  outputs   " << dir.string() << "/\n";
  return 0;
}

struct ValidateArgs {
  std::string scenario;
  std::vector<std::string> sets;
  bool keys = false, markdown = false;
};

int validate(const ValidateArgs& a)
{
  if (a.keys) {
    auto cell = [](std::string text) { // a '|' inside a cell would end it
      for (std::size_t i = 0; (i = text.find('|', i)) != std::string::npos; i += 2)
        text.replace(i, 1, "\\|");
      return text;
    };
    for (const auto& f : describe_scenario_keys())
      std::cout << (a.markdown ? fmt::format("| `{}` | {} | {} | {} |\n", f.path, cell(f.type), cell(f.default_value),
                                             cell(f.help))
                               : fmt::format("{:<42} {:<18} {:<16} {}\n", f.path, f.type, f.default_value, f.help));
    return 0;
  }
  if (a.scenario.empty())
    throw InputError("<command line>", 1, 1, "validate needs a scenario file (or --keys)");
  const Scenario s = load_checked(a.scenario, a.sets);
  std::cout << "ok: " << s.name << " (" << a.scenario << ")\n";
  return 0;
}

} // namespace

std::vector<Command> add_scenario_commands(CLI::App& app)
{
  auto r = std::make_shared<RunArgs>();
  auto* run_cmd = app.add_subcommand("run", "run a scenario and write report.json (and trace.json with --trace)");
  run_cmd->add_option("scenario", r->scenario, "scenario YAML file")->required();
  run_cmd->add_option("--set", r->sets, "override a key: --set cluster.nodes=4 (repeatable)");
  run_cmd->add_option("--backend", r->backend, "simgrid | analytical (overrides the scenario's backend)")
      ->check(CLI::IsMember({"simgrid", "analytical"}));
  run_cmd->add_option("--seed", r->seed, "seed of every random generator (overrides the scenario's seed)")
      ->check([](const std::string& v) { return v.rfind('-', 0) == 0 ? "--seed must not be negative" : ""; });
  run_cmd->add_option("--out", r->out_dir, "output folder (default ./out/<scenario name>/)")
      ->check([](const std::string& v) { return v.empty() ? std::string("--out must not be empty") : ""; });
  run_cmd
      ->add_option("--max-tasks", r->max_tasks,
                   "refuse a run whose task graph would exceed this many tasks (about 120 bytes each; default "
                   "30000000)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 34));
  run_cmd
      ->add_option("--replicas", r->replicas,
                   "training: auto | all | one data-parallel replicas simulated (auto: one when the analytical "
                   "backend would build a large graph and the network treats replicas alike; docs/scale.md)")
      ->check(CLI::IsMember({"auto", "all", "one"}));
  run_cmd->add_flag("--plots", r->plots,
                    "also draw timeline, utilization, breakdown and (job workloads) jct as PNG and SVG (gnuplot)");
  run_cmd->add_flag("--trace", r->trace, "also write trace.json (Chrome trace-event format, opens in Perfetto)");
  run_cmd->add_flag("--quiet", r->quiet, "do not print the summary");

  auto v = std::make_shared<ValidateArgs>();
  auto* validate_cmd = app.add_subcommand("validate", "check a scenario without running it");
  validate_cmd->add_option("scenario", v->scenario, "scenario YAML file");
  validate_cmd->add_option("--set", v->sets, "override a key (repeatable)");
  validate_cmd->add_flag("--keys", v->keys, "print every scenario key with its type, default and help");
  validate_cmd->add_flag("--markdown", v->markdown, "with --keys: print a Markdown table (docs/scenarios.md)");
  return {{run_cmd, [r] { return run(*r); }}, {validate_cmd, [v] { return validate(*v); }}};
}

} // namespace cs
