// `ad-psgd`: asynchronous decentralized SGD (Lian et al., ICML'18): after each step a worker averages its model with
// one peer drawn at random, exchanging models both ways; the peer keeps computing (it is passive) and nobody waits for
// a barrier. Peers are drawn from the worker's own seeded stream, so a run is reproducible.
#include "policies/sync_scheme/sync_scheme.hpp"

#include <random>
#include <string>

namespace cs {
namespace {

class AdPsgdScheme : public SyncScheme {
public:
  void configure(ObjectReader&) override {}

  void start(SyncWorld& world) override
  {
    const int n = world.workers();
    for (int w = 0; w < n; ++w)
      world.runtime().spawn("worker-" + std::to_string(w), world.host(w), [&world, w, n] {
        std::mt19937_64 rng(world.seed() * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(w));
        std::uniform_int_distribution<int> other(0, n - 2);
        while (world.claim_step(w)) {
          world.compute(w);
          if (n < 2) {
            world.record({w});
            continue;
          }
          int peer = other(rng);
          peer += peer >= w ? 1 : 0; // any worker but itself
          world.exchange(w, peer);
          world.record({w, peer});
        }
      });
  }
};

} // namespace

CS_REGISTER_POLICY(SyncScheme, AdPsgdScheme, "sync_scheme", "ad-psgd",
                   "gossip: after each step a worker averages its model with a random peer (Lian et al., ICML'18)");

} // namespace cs
