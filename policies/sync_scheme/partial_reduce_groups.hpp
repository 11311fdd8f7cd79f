// Partial-reduce on actors: workers of one reduce key meet a central controller, wait for their group (released at
// size P or at a deadline that a timer actor enforces), then all-reduce within it. Shared by partial-reduce and SDPipe.
#pragma once

#include "policies/sync_scheme/partial_reduce_controller.hpp"
#include "policies/sync_scheme/sync_scheme.hpp"

#include <memory>
#include <vector>

namespace cs {

class PartialReduceGroups {
public:
  /** `members`: the world's worker ids that reduce together (all workers, or one pipeline stage's replicas). */
  PartialReduceGroups(SyncWorld& world, std::vector<int> members, const PartialReduceParams& params);

  /** Member `index` is ready: blocks it until its group's all-reduce ends. Adapts its wait; returns its group size. */
  std::size_t sync(int index);
  /** Member `index` is done (budget spent): it will not arrive again. */
  void leave(int index);

private:
  void handle(const PartialReduceRelease& release);
  void run_group(std::vector<int> local);

  SyncWorld& world_;
  std::vector<int> members_;
  PartialReduceParams params_;
  PartialReduceController controller_;
  std::vector<double> wait_;
  std::vector<std::size_t> result_; // 0 = waiting
  std::vector<ActorPtr> actor_;
};

} // namespace cs
