// clustersim's command line: run, validate, list. Exit 0 ok, 1 failed run, 2 bad input (file:line:col: message).
#include "base/input_error.hpp"
#include "base/registry.hpp"
#include "base/units.hpp"
#include "models/devices/device_catalog.hpp"
#include "sim/cli/calibration_commands.hpp"
#include "sim/cli/plan_command.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/run/scenario_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "traces/trace_job.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;

namespace {

// Writes every file to a temporary name first and renames them all at the end, so a failure leaves nothing
// half-written behind.
void write_outputs(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& files)
{
  fs::create_directories(dir);
  std::vector<std::pair<fs::path, fs::path>> staged;
  for (const auto& [name, text] : files) {
    fs::path final_path = dir / name;
    fs::path tmp = dir / ("." + name + ".tmp");
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.close();
    if (!out)
      throw std::runtime_error("cannot write " + tmp.string());
    staged.emplace_back(tmp, final_path);
  }
  for (const auto& [tmp, final_path] : staged)
    fs::rename(tmp, final_path);
}

cs::Scenario load_checked(const std::string& path, const std::vector<std::string>& sets)
{
  cs::Scenario s = cs::load_scenario(path, sets);
  cs::check_scenario(s);
  return s;
}

int list(const std::string& what)
{
  if (what == "policies") {
    std::string domain;
    for (const auto& p : cs::all_policies()) {
      if (p.domain != domain)
        std::cout << (domain.empty() ? "" : "\n") << p.domain << ":\n";
      domain = p.domain;
      std::cout << fmt::format("  {:<22} {}\n", p.name, p.description);
    }
    return 0;
  }
  if (what == "traces") {
    std::cout
        << "swim    SWIM workload TSV (Facebook 2009/2010 samples): job, submit, gap, input, shuffle, output bytes\n"
           "rumen   Hadoop rumen job trace (JSON objects; SLS and gridmix samples), with preferredLocations\n"
           "jhist   MRv2 job history file (Avro-JSON events), one job per file\n"
           "Check a file with: clustersim trace FILE --format FORMAT\n";
    return 0;
  }
  for (const auto& [name, d] : cs::DeviceCatalog::builtin().all()) {
    if (d.kind == "gpu")
      std::cout << fmt::format("{:<16} {:<34} bf16 {:>7.1f} TFLOP/s  {:>6.0f} GB/s  {}  {} SMs\n", name, d.display_name,
                               d.peak("bf16") / 1e12, d.memory_bandwidth / 1e9, cs::units::format_bytes(d.memory_bytes),
                               d.sms);
    else
      std::cout << fmt::format("{:<16} {:<34} {} cores x {:.1f} GFLOP/s  {:>6.1f} GB/s  {}\n", name, d.display_name,
                               d.cores, d.core_speed / 1e9, d.memory_bandwidth / 1e9,
                               cs::units::format_bytes(d.memory_bytes));
  }
  return 0;
}

} // namespace

int main(int argc, char** argv)
{
  CLI::App app{"clustersim: a discrete-event simulator of GPU training and data-analytics clusters"};
  app.set_version_flag("--version", std::string("clustersim ") + cs::clustersim_version());
  app.require_subcommand(1);

  std::string scenario_path, out_dir, backend, what;
  std::vector<std::string> sets;
  long long seed = -1;
  bool trace = false, quiet = false, keys = false, markdown = false;

  auto* run = app.add_subcommand("run", "run a scenario and write report.json (and trace.json with --trace)");
  run->add_option("scenario", scenario_path, "scenario YAML file")->required();
  run->add_option("--set", sets, "override a key: --set cluster.nodes=4 (repeatable)");
  run->add_option("--backend", backend, "simgrid | analytical (overrides the scenario's backend)");
  run->add_option("--seed", seed, "seed of every random generator (overrides the scenario's seed)");
  run->add_option("--out", out_dir, "output folder (default ./out/<scenario name>/)");
  run->add_flag("--trace", trace, "also write trace.json (Chrome trace-event format, opens in Perfetto)");
  run->add_flag("--quiet", quiet, "do not print the summary");

  auto* validate = app.add_subcommand("validate", "check a scenario without running it");
  validate->add_option("scenario", scenario_path, "scenario YAML file");
  validate->add_option("--set", sets, "override a key (repeatable)");
  validate->add_flag("--keys", keys, "print every scenario key with its type, default and help");
  validate->add_flag("--markdown", markdown, "with --keys: print a Markdown table (docs/scenarios.md)");

  std::string cal_device, cal_out, measurements_path, profile_path, predict_device;
  bool cal_quick = false, with_tables = false, json = false;
  int holdout = 4;
  double tolerance = 0.10;
  auto* calibrate = app.add_subcommand("calibrate", "run the microkernels on this machine and write measurements");
  calibrate->add_option("--device", cal_device, "cpu | cuda")->required()->check(CLI::IsMember({"cpu", "cuda"}));
  calibrate->add_option("--out", cal_out, "measurement file to write")->required();
  calibrate->add_flag("--quick", cal_quick, "fewer shapes and repeats");
  auto* fit = app.add_subcommand("fit", "fit a device profile to a measurement file");
  fit->add_option("measurements", measurements_path, "measurement JSON (from calibrate)")->required();
  fit->add_option("--out", cal_out, "profile file to write")->required();
  fit->add_option("--holdout", holdout, "hold out every N-th measurement (default 4)")->check(CLI::Range(2, 1000));
  fit->add_flag("--with-tables", with_tables, "also store the training measurements as profiled tables");
  auto* predict = app.add_subcommand("predict", "predict one kernel: predict --device h200-sxm gemm --m 8192 ...");
  predict->add_option("--device", predict_device, "catalog device (uses its shipped profile)");
  predict->add_option("--profile", profile_path, "a profile JSON (from fit)");
  predict->add_flag("--json", json, "print JSON");
  predict->allow_extras();
  predict->positionals_at_end(false);
  auto* regress = app.add_subcommand("regress", "compare a profile's predictions with measurements");
  regress->add_option("--profile", profile_path, "profile JSON")->required();
  regress->add_option("--measurements", measurements_path, "measurement JSON")->required();
  regress->add_option("--tolerance", tolerance, "largest acceptable median |relative error| (default 0.10)")
      ->check(CLI::PositiveNumber);

  auto* lister = app.add_subcommand("list", "list registered policies, catalog devices or trace formats");
  lister->add_option("what", what, "policies | devices | traces")
      ->required()
      ->check(CLI::IsMember({"policies", "devices", "traces"}));

  cs::PlanCommand plan_cmd;
  auto* planner = app.add_subcommand("plan", "search DP x TP x PP x microbatch x schedule x recomputation plans for a "
                                             "scenario on N GPUs (analytical backend) and print the best");
  planner->add_option("scenario", plan_cmd.scenario, "transformer-training scenario YAML")->required();
  planner->add_option("--gpus", plan_cmd.gpus, "GPUs to plan for (whole nodes, or a part of one node)")->required();
  planner->add_option("--memory-limit", plan_cmd.memory_limit, "memory per GPU, e.g. 40GiB (default: the device's)");
  planner->add_option("--top", plan_cmd.top, "plans to print (default 5)")->check(CLI::Range(1, 1000));
  planner->add_option("--confirm", plan_cmd.confirm, "re-run the best N plans on the simgrid backend")
      ->check(CLI::Range(0, 1000));
  planner->add_flag("--exhaustive", plan_cmd.exhaustive, "simulate every plan that fits (no bound pruning)");
  planner->add_option("--set", plan_cmd.sets, "override a key of the scenario (repeatable)");
  planner->add_option("--out", plan_cmd.out_dir, "also write plans.csv and best.yaml (the best plan as a scenario)");

  std::string trace_path, trace_format = "swim";
  auto* tracer = app.add_subcommand("trace", "read a MapReduce trace and report what was read and skipped");
  tracer->add_option("file", trace_path, "trace file")->required();
  tracer->add_option("--format", trace_format, "swim | rumen | jhist")
      ->check(CLI::IsMember({"swim", "rumen", "jhist"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "<command line>:1:1: " << e.what() << " (see clustersim --help)\n";
    return 2;
  }

  try {
    if (app.got_subcommand(lister))
      return list(what);
    if (app.got_subcommand(planner))
      return cs::command_plan(plan_cmd);
    if (app.got_subcommand(tracer)) {
      long maps = 0;
      double input = 0, shuffle = 0;
      auto summary = cs::read_trace(trace_format, trace_path, [&](cs::TraceJob&& j) {
        maps += j.maps > 0 ? j.maps : static_cast<long>(j.map_input_bytes.size());
        input += j.input_bytes;
        shuffle += j.shuffle_bytes;
      });
      std::cout << cs::describe(summary) << "\n";
      std::cout << fmt::format("  input {}  shuffle {}\n", cs::units::format_bytes(input),
                               cs::units::format_bytes(shuffle));
      for (const auto& p : summary.problems)
        std::cout << "  " << p << "\n";
      return 0;
    }
    if (app.got_subcommand(calibrate))
      return cs::command_calibrate(cal_device, cal_out, cal_quick, fs::read_symlink("/proc/self/exe").string());
    if (app.got_subcommand(fit))
      return cs::command_fit(measurements_path, cal_out, holdout, with_tables);
    if (app.got_subcommand(predict))
      return cs::command_predict(predict_device, profile_path, predict->remaining(), json);
    if (app.got_subcommand(regress))
      return cs::command_regress(profile_path, measurements_path, tolerance);
    if (app.got_subcommand(validate)) {
      if (keys) {
        for (const auto& f : cs::describe_scenario_keys()) {
          if (markdown) {
            auto cell = [](std::string text) { // a '|' inside a cell would end it
              for (std::size_t i = 0; (i = text.find('|', i)) != std::string::npos; i += 2)
                text.replace(i, 1, "\\|");
              return text;
            };
            std::cout << fmt::format("| `{}` | {} | {} | {} |\n", f.path, cell(f.type), cell(f.default_value),
                                     cell(f.help));
          } else {
            std::cout << fmt::format("{:<42} {:<18} {:<16} {}\n", f.path, f.type, f.default_value, f.help);
          }
        }
        return 0;
      }
      if (scenario_path.empty())
        throw cs::InputError("<command line>", 1, 1, "validate needs a scenario file (or --keys)");
      cs::Scenario s = load_checked(scenario_path, sets);
      std::cout << "ok: " << s.name << " (" << scenario_path << ")\n";
      return 0;
    }
    if (!backend.empty())
      sets.push_back("backend=" + backend);
    if (seed >= 0)
      sets.push_back("seed=" + std::to_string(seed));
    cs::Scenario s = load_checked(scenario_path, sets);
    cs::RunResult result = cs::run_scenario(s, cs::RunOptions{trace});
    fs::path dir = out_dir.empty() ? fs::path("out") / s.name : fs::path(out_dir);
    std::vector<std::pair<std::string, std::string>> files{{"report.json", result.report.dump(2) + "\n"},
                                                           {"scenario.resolved.yaml", cs::resolved_yaml(s)}};
    if (trace)
      files.emplace_back("trace.json", result.trace_json);
    files.insert(files.end(), result.files.begin(), result.files.end());
    write_outputs(dir, files);
    if (!quiet)
      std::cout << result.summary << "  outputs   " << dir.string() << "/\n";
    return 0;
  } catch (const cs::InputError& e) {
    std::cerr << e.where() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "clustersim: run failed: " << e.what() << "\n";
    return 1;
  }
}
