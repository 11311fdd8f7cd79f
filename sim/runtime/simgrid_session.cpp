#include "sim/runtime/simgrid_session.hpp"

#include "base/heap_policy.hpp"
#include "base/interrupt.hpp"
#include "sim/platform/simgrid_platform.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <simgrid/s4u.hpp>
#include <string>

namespace cs {

std::unique_ptr<simgrid::s4u::Engine> start_simgrid_session(NetworkModel network_model, SimgridPrecision precision)
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

long simgrid_mappings_left()
{
  long limit = 65536, used = 0;
  if (std::ifstream f("/proc/sys/vm/max_map_count"); f)
    f >> limit;
  if (std::ifstream maps("/proc/self/maps"); maps)
    for (std::string line; std::getline(maps, line);)
      ++used;
  return limit - used - 1000;
}

void fit_actor_stacks(long actors, long left)
{
  // A stack is one mapping and its guard page a second: without guard pages (an actor's loop is shallow) twice as
  // many actors fit. (256 KiB stacks from the heap need no mapping, but a 256 x 8 GPU tree all-reduce then took 9 GB
  // and 48 s instead of 1 GB and 14 s.)
  if (2 * actors > left) {
    simgrid::s4u::Engine::set_config("contexts/guard-size:0");
    map_large_blocks_lazily(); // the stacks now come from calloc
  }
}

} // namespace cs
