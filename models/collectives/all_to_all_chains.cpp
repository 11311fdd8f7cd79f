#include "models/collectives/all_to_all_chains.hpp"

#include <algorithm>
#include <utility>

namespace cs {

AllToAllChains::AllToAllChains(const PlatformSpec& platform, std::vector<int> copy_offsets)
    : platform_(platform), offsets_(std::move(copy_offsets))
{}

double AllToAllChains::next(const std::vector<int>& hosts, const void* matrix,
                            const std::function<std::vector<double>()>& sent, const ProtocolParams& protocol)
{
  auto chain_at = chains_.find(hosts);
  if (chain_at == chains_.end())
    chain_at = chains_.emplace(hosts, Chain{}).first;
  Chain& chain = chain_at->second;
  const auto key = std::make_tuple(matrix, &chain_at->first, chain.state);
  auto found = steps_.find(key);
  if (found == steps_.end()) {
    const std::vector<double>& ready = spreads_[chain.state];
    const FluidAllToAll run = all_to_all_v_fabric_replay(sent(), platform_, hosts, offsets_, protocol, ready);
    Step step;
    if (!run.done.empty()) {
      const double last_ready = ready.empty() ? 0.0 : *std::max_element(ready.begin(), ready.end());
      step.seconds = run.seconds - last_ready;
      // Past kSteps the spread stays: the chain's later steps repeat this one's.
      step.next_state = chain.state;
      if (chain.steps + 1 < kSteps) {
        const double first_done = *std::min_element(run.done.begin(), run.done.end());
        std::vector<double> spread(run.done.size());
        for (std::size_t r = 0; r < spread.size(); ++r)
          spread[r] = run.done[r] - first_done;
        spreads_.push_back(std::move(spread));
        step.next_state = static_cast<int>(spreads_.size()) - 1;
      }
    }
    found = steps_.emplace(key, step).first;
  }
  chain.state = found->second.next_state;
  ++chain.steps;
  return found->second.seconds;
}

} // namespace cs
