#include "platform/shared_links.hpp"

#include <algorithm>
#include <limits>

namespace cs {
namespace {

int direction(const LinkUse& use) { return 2 * use.link + (use.up ? 0 : 1); }

// The links of a route a flow's weight loads: all of them for one flow, all but its own NICs for parallel ones.
std::pair<std::size_t, std::size_t> weighted_span(const std::vector<LinkUse>& route, double weight)
{
  if (weight == 1)
    return {0, route.size()};
  return {1, std::max<std::size_t>(1, route.size() - 1)};
}

} // namespace

SharedLinks::SharedLinks(const Topology& topology, const std::vector<SharedFlow>& flows)
    : slowest_(std::numeric_limits<double>::infinity())
{
  // Every crossing as (direction, flows), sorted and summed: no map, since a fold can hold thousands of flows.
  std::vector<std::pair<int, double>> crossings;
  for (const auto& f : flows) {
    const auto& route = topology.route(f.src, f.dst);
    const auto [first, last] = weighted_span(route, f.weight);
    for (std::size_t i = 0; i < route.size(); ++i)
      crossings.emplace_back(direction(route[i]), i >= first && i < last ? f.weight : 1.0);
  }
  std::sort(crossings.begin(), crossings.end());
  for (const auto& [d, n] : crossings)
    if (!load_.empty() && load_.back().first == d)
      load_.back().second += n;
    else
      load_.emplace_back(d, n);
  const auto& links = topology.links();
  for (const auto& f : flows)
    for (const auto& use : topology.route(f.src, f.dst))
      slowest_ = std::min(slowest_, links[use.link].bandwidth / flows_on(use));
}

double SharedLinks::flows_on(const LinkUse& use) const
{
  const int d = direction(use);
  const auto it = std::lower_bound(load_.begin(), load_.end(), std::make_pair(d, 0.0),
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return it != load_.end() && it->first == d ? it->second : 0.0;
}

std::vector<SharedFlow> copied_flows(const Topology& topology, int src, int dst, const std::vector<int>& offsets)
{
  const int hosts = static_cast<int>(topology.hosts().size());
  std::vector<SharedFlow> out;
  out.reserve(offsets.size());
  for (int o : offsets)
    if (src + o < hosts && dst + o < hosts && src + o >= 0 && dst + o >= 0)
      out.push_back(SharedFlow{src + o, dst + o, 1});
  return out;
}

std::vector<int> disjoint_shifts(const std::vector<int>& hosts, const std::vector<int>& offsets, int host_count)
{
  std::vector<char> taken(static_cast<std::size_t>(std::max(0, host_count)), 0);
  std::vector<int> out;
  for (int o : offsets) {
    // A shift onto a member or past the end shows at its first such host: most offsets are refused at once.
    const bool clear = std::all_of(hosts.begin(), hosts.end(), [&](int h) {
      return h + o >= 0 && h + o < host_count && !taken[static_cast<std::size_t>(h + o)];
    });
    if (!clear)
      continue;
    out.push_back(o);
    for (int h : hosts)
      taken[static_cast<std::size_t>(h + o)] = 1;
  }
  return out;
}

std::vector<SharedFlow> ring_flows(const Topology& topology, const std::vector<int>& hosts,
                                   const std::vector<int>& offsets, int channels)
{
  std::vector<SharedFlow> out;
  const std::size_t n = hosts.size();
  for (std::size_t i = 0; i < n && n > 1; ++i) {
    const int a = hosts[i], b = hosts[(i + 1) % n];
    if (topology.hop_level(a, b) == 0)
      continue;
    for (const auto& f : copied_flows(topology, a, b, offsets))
      out.push_back(SharedFlow{f.src, f.dst, static_cast<double>(channels)});
  }
  return out;
}

} // namespace cs
