// clustersim's command line. Exit 0 ok, 1 a run that failed, 2 bad input (one line file:line:col: message).
#include "base/heap_policy.hpp"
#include "base/input_error.hpp"
#include "base/interrupt.hpp"
#include "sim/cli/command.hpp"
#include "sim/run/scenario_run.hpp"

#include <iostream>

int main(int argc, char** argv)
{
  cs::keep_freed_memory();
  CLI::App app{"clustersim: a discrete-event simulator of GPU training and data-analytics clusters"};
  app.set_version_flag("--version", std::string("clustersim ") + cs::clustersim_version());
  app.require_subcommand(1);
  std::vector<cs::Command> commands;
  for (auto* add :
       {cs::add_scenario_commands, cs::add_plan_commands, cs::add_kernels_commands, cs::add_catalog_commands,
        cs::add_calibration_commands, cs::add_sweep_commands, cs::add_capacity_commands})
    for (auto& c : add(app))
      commands.push_back(std::move(c));
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
  cs::install_interrupt_handlers();
  try {
    for (const auto& c : commands)
      if (app.got_subcommand(c.parser))
        return c.run();
    return 2;
  } catch (const cs::InputError& e) {
    std::cerr << e.where() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "clustersim: run failed: " << e.what() << "\n";
    return 1;
  }
}
