#include "workloads/mapreduce/mapreduce_run.hpp"

#include <algorithm>
#include <map>

#include <utility>

namespace cs {

void MapReduceRun::take_container(int j, int host)
{
  --free_[host];
  ++queue_running_[state_[j].spec->queue];
  ++state_[j].running_containers;
}

void MapReduceRun::release_container(int j, int host)
{
  ++free_[host];
  --queue_running_[state_[j].spec->queue];
  --state_[j].running_containers;
}

void MapReduceRun::launch(const Candidate& c, int host)
{
  auto& s = state_[c.job];
  take_container(c.job, host);
  if (c.map) {
    if (!c.speculative) {
      s.map_state[c.task] = 1;
      s.map_started[c.task] = rt_.now();
      ++s.maps_running;
    } else {
      auto it = std::find(s.speculative_queue.begin(), s.speculative_queue.end(), c.task);
      if (it != s.speculative_queue.end())
        s.speculative_queue.erase(it);
    }
    auto actor = rt_.spawn("m", host, [this, c, host] { map_attempt(c.job, c.task, host, c.speculative); });
    if (p_.speculative)
      s.attempts[c.task].push_back(actor);
  } else {
    ++s.reduces_started;
    ++s.reduces_running;
    rt_.spawn("r", host, [this, c, host] { reduce_task(c.job, c.task, host); });
  }
}

// HDFS output: every replica and the pipeline's flows at once; each pipeline flow is recorded as an output transfer.
void MapReduceRun::hdfs_write(int job, int host, double bytes)
{
  std::vector<std::size_t> records;
  const double t0 = rt_.now();
  cluster_.hdfs_write(host, bytes, p_.replication, rng_, [&](int src, int dst) {
    records.push_back(out_.transfers.size());
    out_.transfers.push_back({TransferKind::OUTPUT, job, src, dst, bytes, t0, t0});
  });
  for (auto i : records)
    out_.transfers[i].end = rt_.now();
}

void MapReduceRun::map_attempt(int j, int m, int host, bool speculative)
{
  auto& s = state_[j];
  const auto& spec = s.spec->maps[m];
  const double start = rt_.now();
  // Read the nearest replica (ties: the first listed).
  int src = spec.replicas.empty() ? host : spec.replicas.front();
  for (int h : spec.replicas)
    if (cost_.level(h, host) < cost_.level(src, host))
      src = h;
  const std::size_t task_record = out_.tasks.size();
  out_.tasks.push_back({j, true, m, host, cost_.level(src, host), start, start, speculative, false});
  s.running[task_record] = {rt_.self(), host};
  const bool fails = !speculative && s.map_failures[m] < static_cast<int>(spec.failed_attempts_s.size());
  std::size_t read_record = out_.transfers.size();
  out_.transfers.push_back({TransferKind::MAP_READ, j, src, host, spec.input_bytes, start, start});
  {
    std::vector<ActivityPtr> acts;
    cluster_.read_from(src, host, spec.input_bytes, acts);
    for (auto& a : acts)
      rt_.wait(a);
  }
  out_.transfers[read_record].end = rt_.now();
  cluster_.compute(host, fails ? spec.failed_attempts_s[s.map_failures[m]] : spec.compute_s);
  if (fails && map_attempt_failed(j, m, host, task_record))
    return;
  if (s.spec->reduces > 0) {
    if (rt_.has_disk(host) && ClusterRuntime::some(s.spec->map_output_bytes(m)))
      rt_.wait(cluster_.disk_io(host, s.spec->map_output_bytes(m), true)); // spill
  } else {
    hdfs_write(j, host, s.spec->output_bytes / s.spec->maps.size());
  }
  const double end = rt_.now();
  out_.tasks[task_record].end = end;
  s.running.erase(task_record);
  release_container(j, host);
  if (s.map_state[m] == 2) { // another attempt won while this one was finishing
    out_.tasks[task_record].killed = true;
    return;
  }
  s.map_state[m] = 2;
  s.map_output_host[m] = host;
  --s.maps_running;
  ++s.maps_done;
  s.map_seconds_sum += end - s.map_started[m];
  ++s.map_seconds_n;
  s.done_order.push_back(m);
  s.output_on_host[host] += s.spec->map_output_bytes(m);
  if (p_.speculative) // (a kill yields too: loop over a copy)
    for (const auto& other : std::exchange(s.attempts[m], {}))
      if (!other->is_self())
        kill_attempt(j, m, other);
  // A resume yields to the engine, and a reducer that runs meanwhile may add itself to the list: wake a copy.
  const auto waiting = std::exchange(s.waiting_reducers, {});
  for (const auto& r : waiting)
    r->resume();
  if (s.maps_done == static_cast<int>(s.spec->maps.size()) && s.spec->reduces == 0)
    finish_job(j);
}

// A recorded failure redone: the attempt read and ran for its recorded time, then failed. The map is pending again
// (the AM asks for another container), or, when it was the task's last attempt, the job fails. Always true.
bool MapReduceRun::map_attempt_failed(int j, int m, int host, std::size_t record)
{
  auto& s = state_[j];
  const auto& spec = s.spec->maps[m];
  out_.tasks[record].end = rt_.now();
  out_.tasks[record].failed = true;
  s.running.erase(record);
  release_container(j, host);
  --s.maps_running;
  if (++s.map_failures[m] == static_cast<int>(spec.failed_attempts_s.size()) && spec.gives_up) {
    fail_job(j);
    return true;
  }
  const double relaunch =
      s.map_failures[m] <= static_cast<int>(spec.relaunch_s.size()) ? spec.relaunch_s[s.map_failures[m] - 1] : 0.0;
  if (relaunch >= ClusterRuntime::kShortest) // the recorded wait before the next attempt launched
    rt_.sleep_for(relaunch);
  if (s.failed)
    return true;
  s.map_state[m] = 0;
  s.pending_head = std::min(s.pending_head, static_cast<std::size_t>(m));
  for (int h : spec.replicas)
    s.maps_on_host[h].push_back(m);
  return true;
}

// A reducer's recorded failed attempts, redone back to back in its container before the attempt that succeeds, each
// with its recorded wait for the next launch (reconstructed: Hadoop gives the container back and allocates another);
// true when the last one gives up and fails the job.
bool MapReduceRun::reduce_attempts_failed(int j, int r, int host, std::size_t& record)
{
  auto& s = state_[j];
  const auto& failures = s.spec->reduce_failed_attempts_s[r];
  for (std::size_t k = 0; k < failures.size(); ++k) {
    cluster_.compute(host, failures[k]);
    out_.tasks[record].end = rt_.now();
    out_.tasks[record].failed = true;
    s.running.erase(record);
    if (k + 1 == failures.size() && r < static_cast<int>(s.spec->reduce_gives_up.size()) &&
        s.spec->reduce_gives_up[r]) {
      release_container(j, host);
      fail_job(j);
      return true;
    }
    record = out_.tasks.size();
    out_.tasks.push_back({j, false, r, host, -1, rt_.now(), rt_.now(), false, false});
    s.running[record] = {rt_.self(), host};
  }
  return false;
}

// A task gave up: the AM kills the job's running attempts, gives their containers back and ends the job (commit_s
// stands for its clean-up).
void MapReduceRun::fail_job(int j)
{
  auto& s = state_[j];
  s.failed = true;
  for (auto& [record, attempt] : std::exchange(s.running, {})) {
    out_.tasks[record].end = rt_.now();
    out_.tasks[record].killed = true;
    attempt.actor->kill();
    release_container(j, attempt.host);
  }
  s.waiting_reducers.clear();
  finish_job(j);
}

void MapReduceRun::kill_attempt(int j, int m, const ActorPtr& actor)
{
  // The loser's record is the last open one for (j, m) on its host; close it and give its container back.
  const int host = actor->host();
  for (auto it = out_.tasks.rbegin(); it != out_.tasks.rend(); ++it)
    if (it->job == j && it->map && it->index == m && it->host == host && it->end == it->start && !it->killed) {
      it->end = rt_.now();
      it->killed = true;
      break;
    }
  std::erase_if(state_[j].running, [&](const auto& e) { return e.second.actor == actor; });
  actor->kill();
  release_container(j, host);
}

// A reducer fetches its partition of every map output as maps finish: one flow per source host with every ready
// output there (as Hadoop's fetchers batch them), at most parallel_copies at once; it suspends while none is ready.
void MapReduceRun::fetch_map_outputs(int j, int host)
{
  auto& s = state_[j];
  const int maps = static_cast<int>(s.spec->maps.size());
  std::size_t cursor = 0;
  int fetched = 0;
  struct Fetch {
    int src;
    double bytes;
    int count;
  };
  std::vector<Fetch> queue; // per source host, in host order
  std::size_t queue_head = 0;
  std::vector<ActivityPtr> inflight;
  std::vector<std::pair<std::size_t, int>> inflight_info; // transfer record, map count
  while (fetched < maps) {
    if (cursor < s.done_order.size()) {
      std::map<int, std::pair<double, int>> by_host;
      for (; cursor < s.done_order.size(); ++cursor) {
        const int m = s.done_order[cursor];
        auto& e = by_host[s.map_output_host[m]];
        e.first += s.spec->map_output_bytes(m) / s.spec->reduces;
        ++e.second;
      }
      for (const auto& [src, e] : by_host)
        queue.push_back({src, e.first, e.second});
    }
    while (static_cast<int>(inflight.size()) < p_.parallel_copies && queue_head < queue.size()) {
      const Fetch f = queue[queue_head++];
      if ((f.src == host && !rt_.has_disk(host)) || !ClusterRuntime::some(f.bytes)) { // nothing to move
        fetched += f.count;
        continue;
      }
      const double t0 = rt_.now();
      inflight_info.emplace_back(out_.transfers.size(), f.count);
      out_.transfers.push_back({TransferKind::SHUFFLE, j, f.src, host, f.bytes, t0, t0, f.count});
      inflight.push_back(f.src == host ? cluster_.disk_io(host, f.bytes, false) : cluster_.flow(f.src, host, f.bytes));
    }
    if (inflight.empty()) {
      if (fetched >= maps || cursor < s.done_order.size())
        continue;
      s.waiting_reducers.push_back(rt_.self());
      rt_.suspend();
      continue;
    }
    const std::size_t done = rt_.wait_any(inflight);
    out_.transfers[inflight_info[done].first].end = rt_.now();
    fetched += inflight_info[done].second;
    inflight.erase(inflight.begin() + done);
    inflight_info.erase(inflight_info.begin() + done);
  }
}

void MapReduceRun::reduce_task(int j, int r, int host)
{
  auto& s = state_[j];
  const double start = rt_.now();
  std::size_t task_record = out_.tasks.size();
  out_.tasks.push_back({j, false, r, host, -1, start, start, false, false});
  s.running[task_record] = {rt_.self(), host};
  const auto& retried = s.spec->reduce_failed_attempts_s;
  if (r < static_cast<int>(retried.size()) && !retried[r].empty() && reduce_attempts_failed(j, r, host, task_record))
    return;
  fetch_map_outputs(j, host);
  const double partition = s.spec->shuffle_bytes / s.spec->reduces;
  if (rt_.has_disk(host) && ClusterRuntime::some(partition)) // merge pass: the fetched segments are read back
    rt_.wait(cluster_.disk_io(host, partition, false));
  cluster_.compute(host, s.spec->reduce_compute_s[r]);
  hdfs_write(j, host, s.spec->output_bytes / s.spec->reduces);
  out_.tasks[task_record].end = rt_.now();
  s.running.erase(task_record);
  release_container(j, host);
  --s.reduces_running;
  if (++s.reduces_done == s.spec->reduces)
    finish_job(j);
}

// The last task is done: the AM commits the output and shuts down (commit_s), then gives its container back.
void MapReduceRun::finish_job(int j)
{
  if (state_[j].spec->commit_s < ClusterRuntime::kShortest) {
    close_job(j);
    return;
  }
  rt_.spawn("commit", state_[j].am_host >= 0 ? state_[j].am_host : 0, [this, j] {
    rt_.sleep_for(state_[j].spec->commit_s);
    close_job(j);
  });
}

void MapReduceRun::close_job(int j)
{
  auto& s = state_[j];
  if (s.am_host >= 0)
    release_container(j, s.am_host);
  s.done = true;
  s.finish = rt_.now();
  s.maps_on_host.clear();
  s.maps_on_host.shrink_to_fit();
  active_.erase(std::find(active_.begin(), active_.end(), j));
  ++jobs_done_;
}

} // namespace cs
