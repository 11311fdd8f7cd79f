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
void configure_simgrid_network_model(NetworkModel model);

/** Per link direction (2 x link + up): 1 where no sharing of the routes among `pairs` (all ordered pairs when
 *  empty) can make it a bottleneck. That holds for a full-duplex direction without background load that starts and
 *  ends no route and whose bandwidth covers the sum of the first links of all routes through it, or of their last
 *  links: every byte through it crossed one of those first (or crosses one after), so under max-min (with LV08's
 *  acknowledgements too, which load each link of a reverse route as they load its ends) it never holds a flow back.
 *  A non-blocking fabric's uplinks are such links, in both directions. */
std::vector<char> links_that_never_bind(const PlatformSpec& spec, const std::vector<std::pair<int, int>>& pairs);

/** Creates one Full zone holding every host and link, with a route (our Topology::route, same links and
 *  directions) for each pair in `pairs`, or for every ordered pair when `pairs` is empty. Link directions that
 *  never bind are left out of the routes and their latency moves to a link private to the source and that latency,
 *  so the rates and times are the same while SimGrid's solver sees small sharing components (flows that share a
 *  NIC) instead of one that spans the fabric. */
SimgridPlatform instantiate_on_simgrid(const PlatformSpec& spec, const std::vector<std::pair<int, int>>& pairs);
/** The same, given links_that_never_bind(spec, pairs) already computed. */
SimgridPlatform instantiate_on_simgrid(const PlatformSpec& spec, const std::vector<std::pair<int, int>>& pairs,
                                       const std::vector<char>& never_bind);

} // namespace cs
