// `clustersim goodput SCENARIO --days D [--seeds N] [--out DIR]`: the long run of a training scenario.
#include "base/input_error.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/output_files.hpp"
#include "sim/goodput/goodput.hpp"
#include "sim/run/scenario_checks.hpp"

#include <filesystem>
#include <iostream>

namespace cs {
namespace {

struct GoodputArgs {
  std::string scenario, out_dir;
  std::vector<std::string> sets;
  GoodputOptions options;
  bool plots = false;
};

int goodput(const GoodputArgs& a)
{
  if (!(a.options.days > 0 && a.options.days <= 3650))
    throw InputError("<command line>", 1, 1, "--days must be in (0, 3650]");
  Scenario s = load_scenario(a.scenario, a.sets);
  check_scenario(s);
  const std::filesystem::path out =
      a.out_dir.empty() ? std::filesystem::path("out") / (s.name + "-goodput") : std::filesystem::path(a.out_dir);
  check_output_dir(out.string());
  GoodputOptions options = a.options;
  options.by_gpus = a.plots;
  const GoodputResult r = run_goodput(s, options);
  std::vector<std::pair<std::string, std::string>> files{{"goodput.json", goodput_json(r, options).dump(2) + "\n"}};
  if (a.plots)
    for (auto& f : goodput_plots(r))
      files.push_back(std::move(f));
  write_output_set(out.string(), files);
  std::cout << "clustersim goodput — " << s.name << "\n" << goodput_summary(r, options);
  std::cout << "  wrote     " << (out / "goodput.json").string() << "\n";
  return 0;
}

} // namespace

std::vector<Command> add_goodput_commands(CLI::App& app)
{
  auto a = std::make_shared<GoodputArgs>();
  auto* cmd = app.add_subcommand("goodput", "a training run over days: failures, checkpoints and restarts composed "
                                            "with the simulated step (ETTR, goodput, lost GPU-hours)");
  cmd->add_option("scenario", a->scenario,
                  "scenario YAML file (transformer-training with cluster.failures and "
                  "workload.checkpoint)")
      ->required();
  cmd->add_option("--days", a->options.days, "length of the run in days (at most 3650)")->required();
  cmd->add_option("--seeds", a->options.seeds, "independent draws of the failure process")->check(CLI::Range(1, 1000));
  cmd->add_option("--set", a->sets, "override a scenario key (repeatable)");
  cmd->add_flag("--plots", a->plots,
                "also draw ETTR against the interval and against the GPU count (PNG, SVG); the second simulates the "
                "job's step and checkpoint on 1/8 to 4 times its nodes (ettr_by_gpus in goodput.json)");
  cmd->add_option("--out", a->out_dir, "output folder (default ./out/<scenario name>-goodput/)");
  return {{cmd, [a] { return goodput(*a); }}};
}

} // namespace cs
