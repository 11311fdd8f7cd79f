// One subcommand of the clustersim CLI: its CLI11 parser and what it does once parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

namespace cs {

/** A subcommand added to the app; run() returns the exit code (0 ok, 1 failed run, 2 bad input). */
struct Command {
  CLI::App* parser = nullptr;
  std::function<int()> run;
};

/** A CLI11 check that a value names a declared metric (core/metric.hpp), pointing at `list metrics` if not. */
CLI::Validator declared_metric();

/** run, validate */
std::vector<Command> add_scenario_commands(CLI::App& app);
/** list, trace */
std::vector<Command> add_catalog_commands(CLI::App& app);
/** calibrate, fit, predict, regress */
std::vector<Command> add_calibration_commands(CLI::App& app);
/** plan */
std::vector<Command> add_plan_commands(CLI::App& app);
/** plan-capacity */
std::vector<Command> add_capacity_commands(CLI::App& app);
/** sweep */
std::vector<Command> add_sweep_commands(CLI::App& app);
/** goodput */
std::vector<Command> add_goodput_commands(CLI::App& app);
/** kernels */
std::vector<Command> add_kernels_commands(CLI::App& app);
/** import */
std::vector<Command> add_import_commands(CLI::App& app);

} // namespace cs
