// The actor runtime on SimGrid: actors are s4u actors, disks and flows s4u activities on the platform's hosts.
#pragma once

#include "core/actor_runtime.hpp"
#include "platform/platform_spec.hpp"

#include <memory>

namespace cs {

/** A runtime over `platform` (which must outlive it); its engine starts in run(). */
std::unique_ptr<ActorRuntime> make_simgrid_actor_runtime(const PlatformSpec& platform);

} // namespace cs
