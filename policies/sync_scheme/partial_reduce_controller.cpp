#include "policies/sync_scheme/partial_reduce_controller.hpp"

#include <algorithm>
#include <set>

namespace cs {

PartialReduceController::PartialReduceController(int workers, PartialReduceParams params)
    : workers_(workers), group_size_(params.group_size > 0 ? params.group_size : std::max(2, workers / 2)),
      params_(params), gone_(static_cast<std::size_t>(workers), false), active_(workers),
      rank_(static_cast<std::size_t>(workers)), parent_(static_cast<std::size_t>(workers)),
      components_(rank_.data(), parent_.data())
{
  reset_components();
}

void PartialReduceController::reset_components()
{
  for (int w = 0; w < workers_; ++w)
    components_.make_set(w);
}

double PartialReduceController::next_wait(double wait, std::size_t size)
{
  return size < 2 ? std::min(2 * wait, 10e-3) : std::max(0.9 * wait, 1e-5);
}

// Whether the ready workers touch every component of the workers still running (the union-find merge rule).
bool PartialReduceController::covers_every_component() const
{
  auto& sets = components_;
  std::set<int> all, touched;
  for (int w = 0; w < workers_; ++w)
    if (!gone_[w])
      all.insert(sets.find_set(w));
  for (int w : ready_)
    touched.insert(sets.find_set(w));
  return touched.size() == all.size();
}

void PartialReduceController::join(const std::vector<int>& group)
{
  for (std::size_t i = 1; i < group.size(); ++i)
    components_.union_set(group[0], group[i]);
}

// As published: with P > 8 the released list runs as consecutive pairs. An odd one out joins the last pair (our
// choice: the code would leave it alone, a one-worker group although others were ready).
std::vector<std::vector<int>> PartialReduceController::split(std::vector<int> ready) const
{
  std::sort(ready.begin(), ready.end());
  if (group_size_ <= 8 || ready.size() <= 3)
    return {ready};
  std::vector<std::vector<int>> pairs;
  for (std::size_t i = 0; i + 1 < ready.size(); i += 2)
    pairs.push_back({ready[i], ready[i + 1]});
  if (ready.size() % 2 == 1)
    pairs.back().push_back(ready.back());
  return pairs;
}

PartialReduceRelease PartialReduceController::release(bool forced)
{
  PartialReduceRelease out;
  const long long n = workers_;
  const bool sync_due = params_.sync_every > 0 && updates_since_sync_ >= params_.sync_every * n;
  const bool merge_due = !sync_due && params_.ssp_bound > 0 && updates_since_merge_ >= params_.ssp_bound * n;
  if (ready_.empty())
    return out;
  if (sync_due || merge_due) { // no deadline, no size limit: wait for everyone (sync) or every component (merge)
    const bool complete = sync_due ? static_cast<int>(ready_.size()) == active_ : covers_every_component();
    if (!complete)
      return out;
    std::vector<int> all = ready_;
    std::sort(all.begin(), all.end());
    out.groups = {all};
    out.global = sync_due;
    out.merge = true;
    reset_components();
  } else {
    if (!forced && static_cast<int>(ready_.size()) < std::min(group_size_, active_))
      return out;
    out.groups = split(ready_);
    for (const auto& g : out.groups)
      join(g);
  }
  updates_since_merge_ += static_cast<long long>(ready_.size());
  updates_since_sync_ += static_cast<long long>(ready_.size());
  if (out.merge)
    updates_since_merge_ = 0;
  if (out.global)
    updates_since_sync_ = 0;
  ready_.clear();
  deadline_set_ = false;
  out.epoch = ++epoch_;
  return out;
}

PartialReduceRelease PartialReduceController::arrive(int worker, double now, double wait)
{
  ready_.push_back(worker);
  PartialReduceRelease out = release(false);
  if (!out.groups.empty() || deadline_set_)
    return out;
  deadline_set_ = true; // the first arrival of this round sets the deadline
  out.deadline = now + wait;
  out.epoch = epoch_;
  return out;
}

PartialReduceRelease PartialReduceController::deadline(long long epoch)
{
  if (epoch != epoch_ || !deadline_set_)
    return {};
  return release(true);
}

PartialReduceRelease PartialReduceController::leave(int worker)
{
  if (!gone_[worker]) {
    gone_[worker] = true;
    --active_;
  }
  // Everyone still running is waiting: nothing more will arrive, so the round closes now.
  return static_cast<int>(ready_.size()) == active_ ? release(true) : PartialReduceRelease{};
}

} // namespace cs
