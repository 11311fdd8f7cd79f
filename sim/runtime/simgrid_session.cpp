#include "sim/runtime/simgrid_session.hpp"

#include "base/interrupt.hpp"
#include "sim/platform/simgrid_platform.hpp"

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

namespace cs {

std::unique_ptr<simgrid::s4u::Engine> start_simgrid_session(const std::string& network_model,
                                                            SimgridPrecision precision)
{
  static char name[] = "clustersim";
#ifdef CS_SANITIZE_BUILD
  // AddressSanitizer cannot follow the stack switches of SimGrid's default (raw) contexts: an exception thrown inside
  // an actor makes it unpoison what it takes for the main stack, a false stack-buffer-overflow. Threads it follows.
  static char threads[] = "--cfg=contexts/factory:thread";
  int argc = 2;
  char* argv[] = {name, threads, nullptr};
#else
  int argc = 1;
  char* argv[] = {name, nullptr};
#endif
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
