// The actor runtimes on SimGrid: actors are s4u actors; disks and flows are s4u activities (backend simgrid) or a
// flow-level model (backend analytical).
#pragma once

#include "core/actor_runtime.hpp"
#include "platform/platform_spec.hpp"

#include <memory>

namespace cs {

/** A runtime over `platform` (which must outlive it); its engine starts in run(). */
std::unique_ptr<ActorRuntime> make_simgrid_actor_runtime(const PlatformSpec& platform);
/** The same actors over FlowLevelNetwork: disks and flows cost O(route · log flows) per event, whatever is in
 *  flight. Models network.model ideal (the workloads refuse lv08) and background load. */
std::unique_ptr<ActorRuntime> make_flow_level_actor_runtime(const PlatformSpec& platform);

} // namespace cs
