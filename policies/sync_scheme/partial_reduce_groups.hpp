// Partial-reduce on actors: workers of one reduce key meet a central controller and wait for their group (released at
// size P, or at the deadline the round's first arrival waits out), then all-reduce within it, led by one member.
// Shared by partial-reduce and SDPipe. No actor is spawned per group or per deadline (a million of them would cost
// more than the simulation).
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
  /** Hands each released group to a leader (`self` when it is a member, else the group's first) and wakes it. */
  void dispatch(const PartialReduceRelease& release, int self);
  void lead(int index);
  SignalPtr& signal(int index);

  SyncWorld& world_;
  std::vector<int> members_;
  PartialReduceParams params_;
  PartialReduceController controller_;
  std::vector<double> wait_;
  std::vector<std::size_t> result_;                     // the size of the group a member was released in; 0 = waiting
  std::vector<std::shared_ptr<std::vector<int>>> lead_; // the group a member is to lead
  std::vector<SignalPtr> signal_;
};

} // namespace cs
