#include "policies/sync_scheme/partial_reduce_groups.hpp"

#include <string>

namespace cs {

PartialReduceGroups::PartialReduceGroups(SyncWorld& world, std::vector<int> members,
                                         const PartialReduceParams& params)
    : world_(world), members_(std::move(members)), params_(params),
      controller_(static_cast<int>(members_.size()), params), wait_(members_.size(), params.wait_time),
      result_(members_.size(), 0), actor_(members_.size())
{}

std::size_t PartialReduceGroups::sync(int index)
{
  ActorRuntime& rt = world_.runtime();
  result_[index] = 0;
  actor_[index] = rt.self();
  handle(controller_.arrive(index, rt.now(), wait_[index]));
  while (result_[index] == 0)
    rt.suspend();
  actor_[index].reset();
  wait_[index] = PartialReduceController::next_wait(wait_[index], result_[index]);
  return result_[index];
}

void PartialReduceGroups::leave(int index) { handle(controller_.leave(index)); }

// Each released group runs as its own actor, so that groups reduce concurrently and the releasing actor (a worker
// or the deadline timer) is not held by another group's all-reduce.
void PartialReduceGroups::handle(const PartialReduceRelease& release)
{
  ActorRuntime& rt = world_.runtime();
  for (const auto& group : release.groups)
    rt.spawn("preduce-group", world_.host(members_[group.front()]), [this, group] { run_group(group); });
  if (release.deadline >= 0) {
    const long long epoch = release.epoch;
    const double at = release.deadline;
    rt.spawn("preduce-deadline", world_.host(members_.front()), [this, epoch, at] {
      world_.runtime().sleep_until(at);
      handle(controller_.deadline(epoch));
    });
  }
}

void PartialReduceGroups::run_group(std::vector<int> local)
{
  std::vector<int> workers;
  workers.reserve(local.size());
  for (int i : local)
    workers.push_back(members_[i]);
  world_.allreduce(workers);
  world_.record(workers, params_.staleness_weighted);
  for (int i : local) {
    result_[i] = local.size();
    if (actor_[i])
      actor_[i]->resume();
  }
}

} // namespace cs
