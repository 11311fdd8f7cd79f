// clustersim's command line: the subcommands, parsing, and the exit codes.
#include "sim/cli/cli.hpp"

#include "base/input_error.hpp"
#include "base/interrupt.hpp"
#include "sim/cli/command.hpp"
#include "sim/run/scenario_run.hpp"

#include <iostream>

namespace cs {

int run_cli(int argc, char** argv)
{
  CLI::App app{"clustersim: a discrete-event simulator of GPU training and data-analytics clusters"};
  app.set_version_flag("--version", std::string("clustersim ") + clustersim_version());
  app.require_subcommand(1);
  std::vector<Command> commands;
  for (auto* add :
       {add_scenario_commands, add_plan_commands, add_kernels_commands, add_catalog_commands,
        add_calibration_commands, add_sweep_commands, add_capacity_commands, add_goodput_commands,
        add_import_commands})
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
  install_interrupt_handlers();
  try {
    for (const auto& c : commands)
      if (app.got_subcommand(c.parser))
        return c.run();
    return 2;
  } catch (const InputError& e) {
    std::cerr << e.where() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "clustersim: run failed: " << e.what() << "\n";
    return 1;
  }
}

} // namespace cs
