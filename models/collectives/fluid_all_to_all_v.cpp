#include "models/collectives/fluid_all_to_all_v.hpp"

#include <boost/container_hash/hash.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

namespace cs {
namespace {

struct FluidFlow {
  double bytes = 0, latency = 0;
  double gate = 0;  // when both its ranks are ready: it starts no earlier
  double share = 1; // its weight where links are shared: 1 / its route's latency, as SimGrid's CM02 weighs flows
  int first_use = 0, last_use = 0; // its [first, last) entries in Fluid::uses
};

// A link direction's capacity and, during one sharing round, its load.
struct Resource {
  double capacity = 0;
  double left = 0, weight = 0; // capacity not yet given out; weight of the flows on it not yet fixed
  int unfixed = 0;
  std::vector<int> users;
  bool touched = false;
};

class Fluid {
public:
  Fluid(const Topology& topo, const FluidAllToAllParams& params) : topo_(topo), params_(params)
  {
    index_.assign(2 * topo.links().size(), -1);
  }

  // Adds the pair's flow with its route's links (every link for the group itself, the links between switches for
  // each copy) and returns its id.
  int add_flow(int src, int dst, double bytes, double gate, const std::vector<int>& shifts)
  {
    FluidFlow f;
    f.bytes = bytes;
    f.gate = gate;
    const double route_latency = topo_.route_latency(src, dst);
    f.latency = params_.overhead + route_latency;
    f.share = route_latency > 0 ? 1 / route_latency : 1.0;
    f.first_use = static_cast<int>(uses_.size());
    const int hosts = topo_.host_count();
    for (std::size_t s = 0; s < shifts.size(); ++s) {
      const int a = src + shifts[s], b = dst + shifts[s];
      if (a < 0 || b < 0 || a >= hosts || b >= hosts)
        continue;
      const auto& route = topo_.route(a, b);
      const bool itself = shifts[s] == 0;
      for (std::size_t k = itself ? 0 : 1; k + (itself ? 0 : 1) < route.size(); ++k)
        add_use(f, route[k]);
    }
    if (params_.rate_cap > 0) { // the channel's own bound: a resource only this flow uses
      Resource own;
      own.capacity = params_.rate_cap * params_.efficiency;
      resources_.push_back(own);
      uses_.emplace_back(static_cast<int>(resources_.size()) - 1, 1.0);
    }
    f.last_use = static_cast<int>(uses_.size());
    flows_.push_back(f);
    return static_cast<int>(flows_.size()) - 1;
  }

  // Runs the chains (each a list of flow ids sent one after another) from time 0; returns when the last one ends.
  // Each flow's end is left in ends().
  double run(const std::vector<std::vector<int>>& chains)
  {
    const std::size_t nf = flows_.size();
    remaining_.assign(nf, 0.0);
    end_.assign(nf, 0.0);
    rate_.assign(nf, 0.0);
    fixed_.assign(nf, 0);
    std::vector<std::size_t> next(chains.size(), 0);
    std::vector<int> chain_of(nf, -1);
    for (std::size_t c = 0; c < chains.size(); ++c)
      for (int f : chains[c])
        chain_of[f] = static_cast<int>(c);
    std::vector<std::pair<double, int>> waiting; // (when its latency ends, flow)
    std::vector<int> active;
    double now = 0;
    auto start = [&](int c) {
      if (next[c] >= chains[c].size())
        return;
      const int f = chains[c][next[c]++];
      remaining_[f] = flows_[f].bytes;
      waiting.emplace_back(std::max(now, flows_[f].gate) + flows_[f].latency, f);
    };
    for (std::size_t c = 0; c < chains.size(); ++c)
      start(static_cast<int>(c));
    std::vector<int> still;
    while (!active.empty() || !waiting.empty()) {
      // Flows whose latency has passed join; a flow with no links moves at once.
      for (std::size_t k = 0; k < waiting.size();) {
        if (waiting[k].first <= now * (1 + 1e-12)) {
          active.push_back(waiting[k].second);
          waiting[k] = waiting.back();
          waiting.pop_back();
        } else {
          ++k;
        }
      }
      if (active.empty()) {
        double soonest = std::numeric_limits<double>::infinity();
        for (const auto& w : waiting)
          soonest = std::min(soonest, w.first);
        now = soonest;
        continue;
      }
      share(active);
      double step = std::numeric_limits<double>::infinity();
      for (int f : active)
        step = std::min(step, rate_[f] > 0 ? remaining_[f] / rate_[f] : std::numeric_limits<double>::infinity());
      for (const auto& w : waiting)
        step = std::min(step, w.first - now);
      if (!(step < std::numeric_limits<double>::infinity()))
        return std::numeric_limits<double>::infinity(); // a flow over a link of no capacity never ends
      now += step;
      still.clear();
      for (int f : active) {
        remaining_[f] -= rate_[f] * step;
        if (remaining_[f] <= 1e-9 * flows_[f].bytes) {
          end_[f] = now;
          start(chain_of[f]);
        } else
          still.push_back(f);
      }
      active.swap(still);
    }
    return now;
  }

  const std::vector<double>& ends() const { return end_; }

  // What the replay depends on, with the link directions named in order of first use: equal for two groups whose
  // flows share links alike (a group and its translate on a symmetric fabric), whatever the links' indices.
  std::size_t signature(const std::vector<std::pair<int, int>>& ranks_of) const
  {
    std::vector<int> name(resources_.size(), -1);
    int named = 0;
    std::size_t h = flows_.size();
    auto mix = [&h](double v) { boost::hash_combine(h, v); };
    for (std::size_t f = 0; f < flows_.size(); ++f) {
      const FluidFlow& flow = flows_[f];
      mix(ranks_of[f].first);
      mix(ranks_of[f].second);
      mix(flow.bytes);
      mix(flow.latency);
      mix(flow.share);
      mix(flow.last_use - flow.first_use);
      for (int u = flow.first_use; u < flow.last_use; ++u) {
        int& n = name[uses_[u].first];
        if (n < 0) {
          n = named++;
          mix(resources_[uses_[u].first].capacity);
        }
        mix(n);
        mix(uses_[u].second);
      }
    }
    return h;
  }

private:
  void add_use(FluidFlow& f, const LinkUse& use)
  {
    const PhysicalLink& link = topo_.links()[use.link];
    const int key = 2 * use.link + (link.full_duplex && !use.up ? 1 : 0);
    if (index_[key] < 0) {
      index_[key] = static_cast<int>(resources_.size());
      Resource r;
      r.capacity = link.bandwidth * params_.efficiency;
      resources_.push_back(r);
    }
    const int r = index_[key];
    for (int u = f.first_use; u < static_cast<int>(uses_.size()); ++u)
      if (uses_[u].first == r) {
        uses_[u].second += 1; // a copy crossing the same link direction as another
        return;
      }
    uses_.emplace_back(r, 1.0);
  }

  // Max-min fair rates by progressive filling: the link direction that can give its unfixed flows the least fixes
  // them at that rate, and so on. A flow standing for w copies on a link takes w times its rate there.
  void share(const std::vector<int>& active)
  {
    touched_.clear();
    for (int f : active) {
      fixed_[f] = 0;
      for (int u = flows_[f].first_use; u < flows_[f].last_use; ++u) {
        Resource& r = resources_[uses_[u].first];
        if (!r.touched) {
          r.touched = true;
          r.left = r.capacity;
          r.weight = 0;
          r.unfixed = 0;
          r.users.clear();
          touched_.push_back(uses_[u].first);
        }
        r.weight += uses_[u].second * flows_[f].share;
        ++r.unfixed;
        r.users.push_back(f);
      }
    }
    std::size_t unfixed = active.size();
    for (int f : active)
      if (flows_[f].first_use == flows_[f].last_use) { // no link: nothing holds it back
        rate_[f] = std::numeric_limits<double>::infinity();
        fixed_[f] = 1;
        --unfixed;
      }
    // Levels only rise as flows are fixed below them, so a heap of possibly stale levels finds each bottleneck: a
    // popped level that has risen goes back in.
    heap_.clear();
    for (int r : touched_)
      if (resources_[r].unfixed > 0)
        heap_.emplace_back(level_of(resources_[r]), r);
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
    while (unfixed > 0 && !heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      const auto [stale, bottleneck] = heap_.back();
      heap_.pop_back();
      const Resource& b = resources_[bottleneck];
      if (b.unfixed <= 0)
        continue;
      const double level = level_of(b);
      if (level > stale * (1 + 1e-12) + 1e-300) {
        heap_.emplace_back(level, bottleneck);
        std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
        continue;
      }
      for (int f : b.users) {
        if (fixed_[f])
          continue;
        fixed_[f] = 1;
        --unfixed;
        rate_[f] = level * flows_[f].share;
        for (int u = flows_[f].first_use; u < flows_[f].last_use; ++u) {
          Resource& r = resources_[uses_[u].first];
          r.left -= uses_[u].second * rate_[f];
          r.weight -= uses_[u].second * flows_[f].share;
          --r.unfixed;
        }
      }
    }
    for (int r : touched_)
      resources_[r].touched = false;
  }

  static double level_of(const Resource& r) { return r.weight > 0 ? std::max(0.0, r.left) / r.weight : 0.0; }

  const Topology& topo_;
  FluidAllToAllParams params_;
  std::vector<std::pair<double, int>> heap_;
  std::vector<int> index_; // link direction -> resource, -1 none yet
  std::vector<Resource> resources_;
  std::vector<FluidFlow> flows_;
  std::vector<std::pair<int, double>> uses_; // (resource, weight) per flow, contiguous
  std::vector<double> remaining_, rate_, end_;
  std::vector<char> fixed_;
  std::vector<int> touched_;
};

} // namespace

namespace {

// The group's flows on their chains (each rank's `slots` streams, peers in ring order from rank + 1, as
// expand_all_to_all_v sends), each gated by its ranks' readiness.
struct Built {
  Fluid fluid;
  std::vector<std::vector<int>> chains;
  std::vector<std::pair<int, int>> ranks_of; // per flow, its sender and receiver
};

Built build(const std::vector<double>& m, const Topology& topology, const std::vector<int>& hosts,
            const std::vector<int>& shifts, const FluidAllToAllParams& params, const std::vector<double>& ready)
{
  const int n = static_cast<int>(hosts.size());
  const int slots = std::max(1, params.slots);
  std::vector<int> own = shifts;
  if (own.empty() || own.front() != 0)
    own.insert(own.begin(), 0);
  auto ready_of = [&](int r) { return ready.empty() ? 0.0 : ready[r]; };
  Built b{Fluid(topology, params), {}, {}};
  b.chains.reserve(std::size_t(n) * slots);
  for (int i = 0; i < n; ++i) {
    const std::size_t first = b.chains.size();
    b.chains.resize(first + slots);
    int sent = 0;
    for (int k = 1; k < n; ++k) {
      const int j = (i + k) % n;
      const double bytes = m[std::size_t(i) * n + j];
      if (bytes <= 0)
        continue;
      const double gate = std::max(ready_of(i), ready_of(j));
      b.chains[first + sent++ % slots].push_back(b.fluid.add_flow(hosts[i], hosts[j], bytes, gate, own));
      b.ranks_of.emplace_back(i, j);
    }
  }
  return b;
}

} // namespace

FluidAllToAll fluid_all_to_all_v(const std::vector<double>& m, const Topology& topology, const std::vector<int>& hosts,
                                 const std::vector<int>& shifts, const FluidAllToAllParams& params,
                                 const std::vector<double>& ready)
{
  const int n = static_cast<int>(hosts.size());
  Built b = build(m, topology, hosts, shifts, params, ready);
  FluidAllToAll out;
  out.seconds = b.fluid.run(b.chains);
  out.done.resize(n);
  for (int r = 0; r < n; ++r)
    out.done[r] = ready.empty() ? 0.0 : ready[r];
  for (std::size_t f = 0; f < b.ranks_of.size(); ++f)
    for (int r : {b.ranks_of[f].first, b.ranks_of[f].second})
      out.done[r] = std::max(out.done[r], b.fluid.ends()[f]);
  for (double d : out.done) // a rank with nothing to move ends when it starts
    out.seconds = std::max(out.seconds, d);
  return out;
}

std::size_t fluid_all_to_all_v_signature(const std::vector<double>& m, const Topology& topology,
                                         const std::vector<int>& hosts, const std::vector<int>& shifts,
                                         const FluidAllToAllParams& params)
{
  const Built b = build(m, topology, hosts, shifts, params, {});
  return b.fluid.signature(b.ranks_of);
}

double fluid_all_to_all_v_seconds(const std::vector<double>& m, const Topology& topology, const std::vector<int>& hosts,
                                  const std::vector<int>& shifts, const FluidAllToAllParams& params)
{
  return fluid_all_to_all_v(m, topology, hosts, shifts, params, {}).seconds;
}

} // namespace cs
