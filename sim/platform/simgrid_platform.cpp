#include "sim/platform/simgrid_platform.hpp"

#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/s4u.hpp>
#include <stdexcept>

namespace cs {

void configure_simgrid_network_model(const std::string& model)
{
  namespace s4u = simgrid::s4u;
  if (model == "ideal") {
    // Pure max-min sharing with time = latency + size / bandwidth: no TCP window bound, no ACK cross-traffic,
    // no latency/bandwidth correction factors. This is what the analytical backend computes.
    s4u::Engine::set_config("network/model:CM02");
    s4u::Engine::set_config("network/TCP-gamma:0");
    s4u::Engine::set_config("network/crosstraffic:0");
  } else if (model == "lv08") {
    s4u::Engine::set_config("network/model:LV08");
  } else {
    throw std::invalid_argument("unknown network model '" + model + "'");
  }
}

SimgridPlatform instantiate_on_simgrid(const PlatformSpec& spec, const std::vector<std::pair<int, int>>& pairs)
{
  namespace s4u = simgrid::s4u;
  SimgridPlatform out;
  const Topology& topo = spec.topology;
  auto* zone = s4u::create_full_zone("cluster");
  const double speed = spec.cpu_cluster ? spec.host.core_speed : kGpuHostSpeed;
  for (int h = 0; h < topo.host_count(); ++h) {
    auto* host = zone->create_host(topo.vertex(topo.hosts()[h]).name, speed);
    host->set_core_count(spec.cpu_cluster ? spec.host.cores : 1);
    if (spec.cpu_cluster && spec.host.disk_bandwidth > 0)
      host->create_disk("disk", spec.host.disk_bandwidth, spec.host.disk_bandwidth)->seal();
    host->seal();
    out.hosts.push_back(host);
  }
  for (std::size_t i = 0; i < topo.links().size(); ++i) {
    const auto& l = topo.links()[i];
    s4u::Link* link =
        l.full_duplex ? zone->create_split_duplex_link(l.name, l.bandwidth) : zone->create_link(l.name, l.bandwidth);
    link->set_latency(l.latency);
    if (auto bg = spec.background.find(static_cast<int>(i)); bg != spec.background.end()) {
      // Background load as a bandwidth profile. SimGrid 3.32 applies its values as absolute bandwidths (its header
      // says fractions; measured: absolute), and its periodic profiles did not repeat as documented in our tests,
      // so a periodic schedule is unrolled: up to 10,000 events, after which the last value holds.
      const auto& a = bg->second;
      std::string text;
      char line[96];
      const int cycles = a.period > 0 ? std::max<int>(1, 10000 / static_cast<int>(a.points.size())) : 1;
      for (int c = 0; c < cycles; ++c)
        for (const auto& [t, v] : a.points) {
          std::snprintf(line, sizeof line, "%.17g %.17g\n", c * a.period + t, v * l.bandwidth);
          text += line;
        }
      const double periodicity = -1;
      link->set_bandwidth_profile(
          simgrid::kernel::profile::ProfileBuilder::from_string(l.name + "-background", text, periodicity));
    }
    link->seal();
    out.links.push_back(link);
  }
  auto add = [&](int src, int dst) {
    std::vector<s4u::LinkInRoute> route;
    for (const auto& use : topo.route(src, dst))
      if (topo.links()[use.link].full_duplex)
        route.emplace_back(out.links[use.link],
                           use.up ? s4u::LinkInRoute::Direction::UP : s4u::LinkInRoute::Direction::DOWN);
      else
        route.emplace_back(out.links[use.link]);
    zone->add_route(out.hosts[src]->get_netpoint(), out.hosts[dst]->get_netpoint(), nullptr, nullptr, route, false);
  };
  if (pairs.empty()) {
    for (int a = 0; a < topo.host_count(); ++a)
      for (int b = 0; b < topo.host_count(); ++b)
        if (a != b)
          add(a, b);
  } else {
    for (const auto& [a, b] : pairs)
      if (a != b)
        add(a, b);
  }
  zone->seal();
  return out;
}

} // namespace cs
