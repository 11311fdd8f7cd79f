// Instantiates a PlatformSpec on SimGrid: hosts, split-duplex links and explicit routes (the only SimGrid platform
// code).
#pragma once

#include "platform/platform_spec.hpp"

#include <utility>
#include <vector>

namespace simgrid::s4u {
class Host;
class Link;
} // namespace simgrid::s4u

namespace cs {

/** GPU hosts get this speed; a kernel of t seconds is an Exec of t * kGpuHostSpeed FLOPs. */
constexpr double kGpuHostSpeed = 1e9;

struct SimgridPlatform {
  std::vector<simgrid::s4u::Host*> hosts; // by host index
  std::vector<simgrid::s4u::Link*> links; // by link index (split-duplex unless the link is half-duplex)
};

/** Sets the network model config (must come before any platform exists). */
void configure_simgrid_network_model(const std::string& model);

/** Creates one Full zone holding every host and link, with a route (our Topology::route, same links and
 *  directions) for each pair in `pairs`, or for every ordered pair when `pairs` is empty. */
SimgridPlatform instantiate_on_simgrid(const PlatformSpec& spec, const std::vector<std::pair<int, int>>& pairs);

} // namespace cs
