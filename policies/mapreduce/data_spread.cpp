#include "policies/mapreduce/data_spread.hpp"

#include <algorithm>

namespace cs {

DataSpread::DataSpread(const CandidateTask& t, const TopologyCost& cost) : task_(&t), cost_(&cost)
{
  if (t.map)
    return; // a map reads one replica: priced directly
  const auto& l = cost.layout();
  host_.assign(l.hosts(), 0.0);
  rack_.assign(l.racks(), 0.0);
  int pods = 0;
  for (int p : l.pod_of)
    pods = std::max(pods, p + 1);
  pod_.assign(pods, 0.0);
  for (std::size_t i = 0; i < t.data_hosts.size(); ++i) {
    const int h = t.data_hosts[i];
    const double b = t.data_bytes[i];
    host_[h] += b;
    rack_[l.rack_of[h]] += b;
    pod_[l.pod_of[h]] += b;
    total_ += b;
  }
}

double DataSpread::cost_at(int h) const
{
  if (task_->map)
    return placement_cost(*task_, h, *cost_);
  const auto& c = cost_->level_costs();
  const auto& l = cost_->layout();
  const double same_host = host_[h], same_rack = rack_[l.rack_of[h]], same_pod = pod_[l.pod_of[h]];
  return c[0] * same_host + c[1] * (same_rack - same_host) + c[2] * (same_pod - same_rack) + c[3] * (total_ - same_pod);
}

double DataSpread::policy_cost_at(int h) const
{
  if (task_->map || !cost_->has_policy())
    return policy_cost(*task_, h, *cost_);
  // Intra-rack sources take the direct path; every other source's path goes through the middlebox chain.
  const auto& l = cost_->layout();
  double c = (rack_[l.rack_of[h]] - host_[h]) * cost_->level_hops(1);
  // Every host of a rack is equally far from a switch outside it, so one representative path per source rack
  // prices all of that rack's bytes.
  for (int r = 0; r < l.racks(); ++r) {
    if (r == l.rack_of[h] || rack_[r] == 0)
      continue;
    c += rack_[r] * cost_->policy_hops(l.hosts_in_rack[r].front(), h);
  }
  return c;
}

double DataSpread::bytes_at(int h) const
{
  if (task_->map)
    return std::find(task_->data_hosts.begin(), task_->data_hosts.end(), h) != task_->data_hosts.end() ? task_->bytes
                                                                                                       : 0;
  return host_[h];
}

RoundJobData round_job_data(const SchedulingRound& round, const TopologyCost& cost)
{
  const auto& layout = cost.layout();
  RoundJobData out;
  for (const auto& t : round.tasks) {
    auto& racks = out.rack_bytes.try_emplace(t.job, std::vector<double>(layout.racks(), 0.0)).first->second;
    if (t.map) {
      for (int h : t.data_hosts)
        racks[layout.rack_of[h]] += t.bytes;
    } else if (!out.reduce_spread.count(t.job)) {
      out.reduce_spread.emplace(t.job, DataSpread(t, cost));
      for (std::size_t i = 0; i < t.data_hosts.size(); ++i)
        racks[layout.rack_of[t.data_hosts[i]]] += t.data_bytes[i];
    }
  }
  return out;
}

} // namespace cs
