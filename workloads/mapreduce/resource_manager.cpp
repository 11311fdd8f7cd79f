#include "workloads/mapreduce/mapreduce_run.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace cs {

void MapReduceRun::resource_manager()
{
  std::size_t next = 0;
  while (jobs_done_ < jobs_.size()) {
    const double now = rt_.now();
    while (next < jobs_.size() && jobs_[next].submit_s <= now + 1e-12)
      activate(static_cast<int>(next++));
    if (active_.empty()) {
      if (next < jobs_.size())
        rt_.sleep_until(jobs_[next].submit_s);
      else
        rt_.sleep_for(p_.heartbeat.value);
      continue;
    }
    if (p_.speculative)
      request_speculation(now);
    round(now);
    rt_.sleep_for(p_.heartbeat.value);
  }
}

void MapReduceRun::activate(int j)
{
  auto& s = state_[j];
  const int maps = static_cast<int>(s.spec->maps.size());
  s.active = true;
  s.map_state.assign(maps, 0);
  s.map_output_host.assign(maps, -1);
  s.map_started.assign(maps, 0);
  s.speculated.assign(maps, 0);
  s.map_failures.assign(maps, 0);
  if (p_.speculative)
    s.attempts.resize(maps);
  s.maps_on_host.assign(layout_.hosts(), {});
  for (int m = 0; m < maps; ++m)
    for (int h : s.spec->maps[m].replicas)
      s.maps_on_host[h].push_back(m);
  active_.push_back(j);
}

void MapReduceRun::request_speculation(double now)
{
  for (int j : active_) {
    auto& s = state_[j];
    if (s.map_seconds_n == 0 || s.maps_running == 0 || s.failed)
      continue;
    std::erase_if(s.speculative_queue, [&](int m) { return s.map_state[m] != 1; });
    const double mean = s.map_seconds_sum / s.map_seconds_n;
    for (std::size_t m = 0; m < s.map_state.size(); ++m)
      if (s.map_state[m] == 1 && !s.speculated[m] && now - s.map_started[m] > p_.speculative_slowdown * mean) {
        s.speculated[m] = 1;
        s.speculative_queue.push_back(static_cast<int>(m));
      }
  }
}

void MapReduceRun::round(double now)
{
  SchedulingRound r;
  r.now = now;
  int free_total = 0;
  const int hosts = layout_.hosts();
  const int start = std::uniform_int_distribution<int>(0, hosts - 1)(rng_); // heartbeats arrive in any order
  place_application_masters(now, start);
  for (int i = 0; i < hosts; ++i) {
    const int h = (start + i) % hosts;
    if (free_[h] > 0) {
      r.offers.push_back({h, free_[h]});
      free_total += free_[h];
    }
  }
  if (free_total == 0)
    return;
  ++out_.rounds;
  for (std::size_t q = 0; q < p_.queues.size(); ++q)
    r.queues.push_back({p_.queues[q].capacity, queue_running_[q]});
  r.total_containers = out_.containers;
  const std::vector<Candidate> cands = candidates(r, free_total);
  if (cands.empty())
    return;
  r.tasks = describe(cands);
  SchedulerContext ctx;
  ctx.cost = &cost_;
  ctx.rng = &rng_;
  auto placements = scheduler_.schedule(r, ctx);
  std::vector<char> used(cands.size(), 0);
  for (const auto& pl : placements) {
    if (pl.task < 0 || pl.task >= static_cast<int>(cands.size()) || used[pl.task] || pl.host < 0 || pl.host >= hosts ||
        free_[pl.host] <= 0)
      throw std::logic_error("mapreduce scheduler returned an invalid placement");
    used[pl.task] = 1;
    launch(cands[pl.task], pl.host);
  }
}

// Each new job's MRAppMaster takes a container (in submission order, on the first host to heartbeat with one free);
// its tasks may be scheduled once the AM has started up. Without AM containers only the start-up delay remains.
void MapReduceRun::place_application_masters(double now, int start)
{
  const int hosts = layout_.hosts();
  for (int j : active_) {
    auto& s = state_[j];
    if (s.am_ready >= 0)
      continue;
    if (!p_.am_container) {
      s.am_ready = now + s.spec->startup_s;
      continue;
    }
    int host = -1;
    for (int i = 0; i < hosts && host < 0; ++i)
      if (free_[(start + i) % hosts] > 0)
        host = (start + i) % hosts;
    if (host < 0)
      return; // no container free: later jobs wait too (FIFO)
    take_container(j, host);
    s.am_host = host;
    s.am_ready = now + s.spec->startup_s;
  }
}

// Per queue, jobs in FIFO order, until the queue has offered enough tasks to fill every free container a few times
// over (what a real RM sees: the AMs' outstanding requests, by location).
std::vector<MapReduceRun::Candidate> MapReduceRun::candidates(const SchedulingRound& r, int free_total)
{
  std::vector<Candidate> cands;
  std::vector<int> per_queue(p_.queues.size(), 0);
  const int window = 2 * free_total + 8;
  for (int j : active_) {
    auto& s = state_[j];
    const int q = s.spec->queue;
    if (per_queue[q] >= window || s.am_ready < 0 || s.am_ready > r.now + 1e-12 || s.failed)
      continue; // (a job whose AM has not started up yet, or that failed, asks for nothing)
    const int before = static_cast<int>(cands.size());
    for (int m : s.speculative_queue)
      if (s.map_state[m] == 1)
        cands.push_back({j, m, true, true});
    // Reducers after slow-start, capped while maps are pending (the AM's reduce ramp-up limit).
    const int maps = static_cast<int>(s.spec->maps.size());
    if (s.reduces_started < s.spec->reduces && s.maps_done >= std::ceil(p_.slowstart * maps - 1e-9)) {
      int allowed = s.spec->reduces - s.reduces_started;
      if (s.maps_done < maps)
        allowed = std::min(allowed, std::max(1, static_cast<int>(p_.reduce_rampup_limit * out_.containers /
                                                                 std::max<std::size_t>(1, active_.size()))) -
                                        s.reduces_running);
      for (int k = 0; k < std::min(allowed, free_total); ++k)
        cands.push_back({j, s.reduces_started + k, false, false});
    }
    add_map_candidates(j, r, free_total, cands);
    per_queue[q] += static_cast<int>(cands.size()) - before;
  }
  return cands;
}

// A job's pending maps: those with a replica on an offered host first (so locality-aware policies can find them),
// then the head of the job's list.
void MapReduceRun::add_map_candidates(int j, const SchedulingRound& r, int free_total, std::vector<Candidate>& cands)
{
  auto& s = state_[j];
  const int maps = static_cast<int>(s.spec->maps.size());
  if (s.pending_maps() > 0) {
    ++stamp_;
    if (mark_.size() < static_cast<std::size_t>(maps))
      mark_.resize(maps, 0);
    auto take = [&](int m) {
      if (s.map_state[m] != 0 || mark_[m] == stamp_)
        return false;
      mark_[m] = stamp_;
      cands.push_back({j, m, true, false});
      return true;
    };
    for (const auto& offer : r.offers) {
      auto& list = s.maps_on_host[offer.host];
      int got = 0;
      std::size_t keep = 0;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const int m = list[i];
        if (s.map_state[m] != 0)
          continue; // drop: no longer pending
        list[keep++] = m;
        if (got < offer.free && take(m))
          ++got;
      }
      list.resize(keep);
    }
    while (s.pending_head < s.map_state.size() && s.map_state[s.pending_head] != 0)
      ++s.pending_head;
    int head = 0;
    for (std::size_t m = s.pending_head; m < s.map_state.size() && head < free_total; ++m)
      if (take(static_cast<int>(m)))
        ++head;
  }
}

// Each candidate as the policy sees it; a reducer's data is D-hat: each host's map output so far, scaled up by map
// progress, split over the reducers.
std::vector<CandidateTask> MapReduceRun::describe(const std::vector<Candidate>& cands)
{
  std::vector<CandidateTask> tasks;
  std::map<int, std::pair<std::vector<int>, std::vector<double>>> reduce_sources;
  for (const auto& c : cands) {
    const auto& s = state_[c.job];
    CandidateTask t;
    t.job = c.job;
    t.task = c.task;
    t.map = c.map;
    t.queue = s.spec->queue;
    t.submit_s = s.spec->submit_s;
    t.pending_maps_of_job = s.pending_maps();
    if (c.map) {
      t.bytes = s.spec->maps[c.task].input_bytes;
      t.data_hosts = s.spec->maps[c.task].replicas;
    } else {
      // D-hat: each host's map output so far, scaled up by map progress, split over the reducers.
      auto it = reduce_sources.find(c.job);
      if (it == reduce_sources.end()) {
        const double progress = std::max(1e-9, static_cast<double>(s.maps_done) / s.spec->maps.size());
        std::vector<int> hosts_v;
        std::vector<double> bytes_v;
        for (const auto& [h, b] : s.output_on_host) {
          hosts_v.push_back(h);
          bytes_v.push_back(b / progress / s.spec->reduces);
        }
        it = reduce_sources.emplace(c.job, std::make_pair(std::move(hosts_v), std::move(bytes_v))).first;
      }
      t.data_hosts = it->second.first;
      t.data_bytes = it->second.second;
      for (double b : t.data_bytes)
        t.bytes += b;
    }
    tasks.push_back(std::move(t));
  }
  return tasks;
}

} // namespace cs
