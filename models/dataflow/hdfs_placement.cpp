#include "models/dataflow/hdfs_placement.hpp"

#include <algorithm>

namespace cs {

namespace {

int uniform(std::mt19937_64& rng, int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); }

/** A random host satisfying `ok`, or -1 (rejection sampling first, then a scan so a small cluster terminates). */
template <class Ok> int pick(const std::vector<int>& candidates, std::mt19937_64& rng, Ok ok)
{
  if (candidates.empty())
    return -1;
  for (int tries = 0; tries < 16; ++tries) {
    int h = candidates[uniform(rng, static_cast<int>(candidates.size()))];
    if (ok(h))
      return h;
  }
  const int start = uniform(rng, static_cast<int>(candidates.size()));
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    int h = candidates[(start + i) % candidates.size()];
    if (ok(h))
      return h;
  }
  return -1;
}

} // namespace

std::vector<int> place_block(const ClusterLayout& layout, int writer, int replication, std::mt19937_64& rng)
{
  std::vector<int> all(layout.hosts());
  for (int h = 0; h < layout.hosts(); ++h)
    all[h] = h;
  std::vector<int> out;
  auto unused = [&](int h) { return std::find(out.begin(), out.end(), h) == out.end(); };
  replication = std::min(replication, layout.hosts());
  out.push_back(writer >= 0 ? writer : uniform(rng, layout.hosts()));
  if (replication >= 2) {
    const int first_rack = layout.rack_of[out[0]];
    int h = pick(all, rng, [&](int c) { return layout.rack_of[c] != first_rack; });
    out.push_back(h >= 0 ? h : pick(all, rng, unused));
  }
  if (replication >= 3) {
    const auto& rack = layout.hosts_in_rack[layout.rack_of[out[1]]];
    int h = pick(rack, rng, unused);
    out.push_back(h >= 0 ? h : pick(all, rng, unused));
  }
  while (static_cast<int>(out.size()) < replication)
    out.push_back(pick(all, rng, unused));
  return out;
}

} // namespace cs
