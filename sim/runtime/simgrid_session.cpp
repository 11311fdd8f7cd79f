#include "sim/runtime/simgrid_session.hpp"

#include "base/interrupt.hpp"
#include "sim/platform/simgrid_platform.hpp"

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

namespace cs {

std::unique_ptr<simgrid::s4u::Engine> start_simgrid_session(const std::string& network_model,
                                                            SimgridPrecision precision)
{
  int argc = 1;
  static char name[] = "clustersim";
  char* argv[] = {name, nullptr};
  auto engine = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
  install_interrupt_handlers(); // the engine installs its own SIGINT handler (a status dump); ours ends the run
  xbt_log_control_set("root.thresh:critical");
  simgrid::s4u::Engine::set_config(fmt::format("surf/precision:{}", precision.surf));
  if (precision.maxmin > 0)
    simgrid::s4u::Engine::set_config(fmt::format("maxmin/precision:{}", precision.maxmin));
  configure_simgrid_network_model(network_model);
  return engine;
}

} // namespace cs
