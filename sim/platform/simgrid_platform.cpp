#include "sim/platform/simgrid_platform.hpp"

#include <algorithm>
#include <map>
#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/s4u.hpp>
#include <stdexcept>

namespace cs {

void configure_simgrid_network_model(NetworkModel model)
{
  namespace s4u = simgrid::s4u;
  if (model == NetworkModel::IDEAL) {
    // Pure max-min sharing with time = latency + size / bandwidth: no TCP window bound, no ACK cross-traffic,
    // no latency/bandwidth correction factors. This is what the analytical backend computes. The window bound is
    // gamma / (2 x latency), and SimGrid 3.32 bounds a flow by min(its rate cap, that): a gamma of 0 drops the
    // bound and the cap with it (measured: 64 KiB capped at 25 GB/s over a 1.2 us, 240 GB/s link took 1.47 us),
    // so gamma is one no route's latency can bring near a link's bandwidth (3.82 us: the cap holds).
    s4u::Engine::set_config("network/model:CM02");
    s4u::Engine::set_config("network/TCP-gamma:1e30");
    s4u::Engine::set_config("network/crosstraffic:0");
  } else {
    s4u::Engine::set_config("network/model:LV08");
  }
}

namespace {

int direction_key(const LinkUse& use) { return 2 * use.link + (use.up ? 1 : 0); }

template <class F> void for_each_pair(const Topology& topo, const std::vector<std::pair<int, int>>& pairs, F f)
{
  if (pairs.empty()) {
    for (int a = 0; a < topo.host_count(); ++a)
      for (int b = 0; b < topo.host_count(); ++b)
        if (a != b)
          f(a, b);
  } else {
    for (const auto& [a, b] : pairs)
      if (a != b)
        f(a, b);
  }
}

} // namespace

std::vector<char> links_that_never_bind(const PlatformSpec& spec, const std::vector<std::pair<int, int>>& pairs)
{
  const Topology& topo = spec.topology;
  const std::size_t n = 2 * topo.links().size();
  std::vector<char> first(n, 0), last(n, 0);
  std::vector<std::vector<int>> feeders(n), drains(n); // first and last links of the routes through each direction
  auto note = [](std::vector<int>& list, int link) {
    if (list.empty() || list.back() != link) // pairs come grouped by source: most repeats are the last one noted
      list.push_back(link);
  };
  for_each_pair(topo, pairs, [&](int a, int b) {
    const auto& route = topo.route(a, b);
    if (route.empty())
      return;
    const int head = direction_key(route.front()), tail = direction_key(route.back());
    first[head] = last[tail] = 1;
    for (std::size_t i = 0; i < route.size(); ++i) {
      if (i > 0)
        note(feeders[direction_key(route[i])], head);
      if (i + 1 < route.size())
        note(drains[direction_key(route[i])], tail);
    }
  });
  // Every byte through a direction crossed one of its feeders before and crosses one of its drains after.
  auto covers = [&](double bandwidth, std::vector<int>& ends) {
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    double sum = 0;
    for (int e : ends)
      sum += topo.links()[e / 2].bandwidth;
    return bandwidth >= sum;
  };
  std::vector<char> out(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const auto& link = topo.links()[k / 2];
    if (first[k] || last[k] || feeders[k].empty() || !link.full_duplex ||
        spec.background.count(static_cast<int>(k / 2)))
      continue;
    out[k] = covers(link.bandwidth, feeders[k]) || covers(link.bandwidth, drains[k]) ? 1 : 0;
  }
  return out;
}

SimgridPlatform instantiate_on_simgrid(const PlatformSpec& spec, const std::vector<std::pair<int, int>>& pairs)
{
  return instantiate_on_simgrid(spec, pairs, links_that_never_bind(spec, pairs));
}

SimgridPlatform instantiate_on_simgrid(const PlatformSpec& spec, const std::vector<std::pair<int, int>>& pairs,
                                       const std::vector<char>& never_binds)
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
  std::map<std::pair<int, double>, s4u::Link*> latency_links; // (source host, latency moved off the route)
  for_each_pair(topo, pairs, [&](int src, int dst) {
    std::vector<s4u::LinkInRoute> route;
    double moved = 0;
    for (const auto& use : topo.route(src, dst)) {
      if (never_binds[direction_key(use)]) {
        moved += topo.links()[use.link].latency;
      } else if (topo.links()[use.link].full_duplex) {
        route.emplace_back(out.links[use.link],
                           use.up ? s4u::LinkInRoute::Direction::UP : s4u::LinkInRoute::Direction::DOWN);
      } else {
        route.emplace_back(out.links[use.link]);
      }
    }
    if (moved > 0) {
      s4u::Link*& lat = latency_links[{src, moved}];
      if (lat == nullptr) {
        // Only this source's routes cross it, and they already share its first link: no new sharing.
        lat = zone->create_link("latency-" + std::to_string(src) + "-" + std::to_string(latency_links.size()), 1e18);
        lat->set_latency(moved);
        lat->seal();
      }
      route.emplace_back(lat);
    }
    zone->add_route(out.hosts[src]->get_netpoint(), out.hosts[dst]->get_netpoint(), nullptr, nullptr, route, false);
  });
  zone->seal();
  return out;
}

} // namespace cs
