#include "policies/sync_scheme/partial_reduce_groups.hpp"

#include <algorithm>

namespace cs {

PartialReduceGroups::PartialReduceGroups(SyncWorld& world, std::vector<int> members,
                                         const PartialReduceParams& params)
    : world_(world), members_(std::move(members)), params_(params),
      controller_(static_cast<int>(members_.size()), params), wait_(members_.size(), params.wait_time),
      result_(members_.size(), 0), lead_(members_.size()), signal_(members_.size())
{}

SignalPtr& PartialReduceGroups::signal(int index)
{
  if (!signal_[index])
    signal_[index] = world_.runtime().make_signal();
  return signal_[index];
}

std::size_t PartialReduceGroups::sync(int index)
{
  ActorRuntime& rt = world_.runtime();
  signal(index);
  result_[index] = 0;
  const PartialReduceRelease arrival = controller_.arrive(index, rt.now(), wait_[index]);
  double deadline = arrival.deadline; // this arrival opened the round: it keeps the round's deadline
  dispatch(arrival, index);
  while (true) {
    if (lead_[index])
      lead(index);
    if (result_[index] > 0)
      break;
    if (!signal(index)->wait_until(deadline) && deadline >= 0) {
      deadline = -1; // the round's time is up: release whoever is ready (this member among them)
      dispatch(controller_.deadline(arrival.epoch), index);
    }
  }
  wait_[index] = PartialReduceController::next_wait(wait_[index], result_[index]);
  return result_[index];
}

void PartialReduceGroups::leave(int index) { dispatch(controller_.leave(index), -1); }

void PartialReduceGroups::dispatch(const PartialReduceRelease& release, int self)
{
  for (const auto& group : release.groups) {
    const bool member = std::find(group.begin(), group.end(), self) != group.end();
    const int leader = member ? self : group.front();
    lead_[leader] = std::make_shared<std::vector<int>>(group);
    if (leader != self)
      signal(leader)->notify();
  }
}

// The leader runs its group's all-reduce, records it and wakes the other members.
void PartialReduceGroups::lead(int index)
{
  const std::vector<int> local = *lead_[index];
  lead_[index].reset();
  std::vector<int> workers;
  workers.reserve(local.size());
  for (int i : local)
    workers.push_back(members_[i]);
  world_.allreduce(workers);
  world_.record(workers, params_.staleness_weighted);
  for (int i : local) {
    result_[i] = local.size();
    if (i != index)
      signal(i)->notify();
  }
}

} // namespace cs
