#include "models/collectives/all_to_all_chains.hpp"

#include <algorithm>
#include <utility>

namespace cs {

AllToAllChains::AllToAllChains(const PlatformSpec& platform, std::vector<int> copy_offsets)
    : platform_(platform), offsets_(std::move(copy_offsets))
{
  state_of({});
}

int AllToAllChains::state_of(std::vector<double> spread)
{
  auto [at, added] = state_ids_.emplace(std::move(spread), static_cast<int>(spreads_.size()));
  if (added)
    spreads_.push_back(&at->first);
  return at->second;
}

double AllToAllChains::next(const std::vector<int>& hosts, const void* matrix,
                            const std::function<std::vector<double>()>& sent, const ProtocolParams& protocol)
{
  auto chain_at = chains_.find(hosts);
  if (chain_at == chains_.end())
    chain_at = chains_.emplace(hosts, Chain{}).first;
  Chain& chain = chain_at->second;
  auto signed_at = signatures_.find(std::make_pair(matrix, &chain_at->first));
  if (signed_at == signatures_.end())
    signed_at = signatures_
                    .emplace(std::make_pair(matrix, &chain_at->first),
                             all_to_all_v_fabric_signature(sent(), platform_, hosts, offsets_, protocol))
                    .first;
  if (!signed_at->second)
    return 0.0;
  // Past kSteps a matrix the chain moved in the second half of its horizon takes its mean time there.
  Window& seen = chain.window[*signed_at->second];
  if (chain.steps >= kSteps && seen.steps > 0) {
    ++chain.steps;
    return seen.seconds / seen.steps;
  }
  const bool capped = chain.steps + 1 >= kSteps;
  const auto key = std::make_tuple(*signed_at->second, chain.state, capped);
  auto found = steps_.find(key);
  if (found == steps_.end()) {
    const std::vector<double> ready = *spreads_[chain.state];
    const FluidAllToAll run = all_to_all_v_fabric_replay(sent(), platform_, hosts, offsets_, protocol, ready);
    Step step;
    const double last_ready = ready.empty() ? 0.0 : *std::max_element(ready.begin(), ready.end());
    step.seconds = run.seconds - last_ready;
    step.next_state = chain.state;
    if (!capped) {
      const double first_done = *std::min_element(run.done.begin(), run.done.end());
      std::vector<double> spread(run.done.size());
      for (std::size_t r = 0; r < spread.size(); ++r)
        spread[r] = run.done[r] - first_done;
      step.next_state = state_of(std::move(spread));
    }
    found = steps_.emplace(key, step).first;
  }
  chain.state = found->second.next_state;
  if (chain.steps >= kSteps / 2 && chain.steps < kSteps) {
    seen.seconds += found->second.seconds;
    ++seen.steps;
  }
  ++chain.steps;
  return found->second.seconds;
}

} // namespace cs
