#include "sim/runtime/simgrid_session.hpp"

#include "base/interrupt.hpp"
#include "sim/platform/simgrid_platform.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <string>
#include <simgrid/s4u.hpp>

namespace cs {

std::unique_ptr<simgrid::s4u::Engine> start_simgrid_session(const std::string& network_model,
                                                            SimgridPrecision precision)
{
  static char name[] = "clustersim";
  int argc = 1;
  char* argv[] = {name, nullptr, nullptr};
#ifdef CS_SANITIZE_BUILD
  // AddressSanitizer cannot follow the stack switches of SimGrid's default (raw) contexts: an exception thrown inside
  // an actor (a kill) makes it unpoison what it takes for the main stack, a false stack-buffer-overflow. It follows
  // threads, which are much slower, so scripts/sanitize.sh asks for them (CS_SIMGRID_CONTEXTS=thread) only for the
  // tests that kill actors.
  static std::string factory;
  if (const char* contexts = std::getenv("CS_SIMGRID_CONTEXTS")) {
    factory = std::string("--cfg=contexts/factory:") + contexts;
    argv[argc++] = factory.data();
  }
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
