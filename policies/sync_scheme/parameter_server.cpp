#include "policies/sync_scheme/parameter_server.hpp"

#include <algorithm>
#include <climits>
#include <memory>
#include <numeric>
#include <string>

namespace cs {
namespace {

struct ServerState {
  std::vector<long long> clock; // steps each worker has pushed (LLONG_MAX once done)
  long long pushed_this_step = 0;
  WaitList behind;              // ssp/asp: workers too far ahead; bsp: workers waiting for the step's pushes
  std::vector<int> all;

  long long slowest() const { return *std::min_element(clock.begin(), clock.end()); }
};

void bsp_loop(SyncWorld& world, ServerState& s, int w)
{
  while (world.claim_step(w)) {
    world.compute(w);
    world.push(w);
    if (++s.pushed_this_step < world.workers()) {
      s.behind.wait(world.runtime());
    } else { // the servers have every gradient of this step: one update, then everyone pulls
      s.pushed_this_step = 0;
      world.record(s.all);
      s.behind.release_all();
    }
    world.pull(w);
  }
}

void bounded_loop(SyncWorld& world, ServerState& s, int w, int staleness)
{
  while (true) {
    // SSP: a worker at clock c starts its next step only while c - slowest <= s.
    while (staleness >= 0 && s.clock[w] - s.slowest() > staleness)
      s.behind.wait(world.runtime());
    if (!world.claim_step(w))
      break;
    world.record_clock_gap(static_cast<int>(s.clock[w] - s.slowest()));
    world.compute(w);
    world.push(w);
    world.record({w});
    const long long before = s.slowest();
    ++s.clock[w];
    if (s.slowest() != before)
      s.behind.release_all();
    world.pull(w);
  }
  s.clock[w] = LLONG_MAX; // a finished worker holds no one back
  s.behind.release_all();
}

} // namespace

void start_parameter_server(SyncWorld& world, int staleness)
{
  auto state = std::make_shared<ServerState>();
  state->clock.assign(static_cast<std::size_t>(world.workers()), 0);
  state->all.resize(static_cast<std::size_t>(world.workers()));
  std::iota(state->all.begin(), state->all.end(), 0);
  for (int w = 0; w < world.workers(); ++w)
    world.runtime().spawn("worker-" + std::to_string(w), world.host(w), [&world, state, w, staleness] {
      if (staleness == 0)
        bsp_loop(world, *state, w);
      else
        bounded_loop(world, *state, w, staleness);
    });
}

} // namespace cs
