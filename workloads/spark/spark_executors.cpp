#include "workloads/spark/spark_run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cs {

double executor_storage_bytes(const SparkParams& p)
{
  return (p.executor_memory.value - p.reserved_memory.value) * p.memory_fraction;
}

double executor_container_bytes(const SparkParams& p)
{
  if (p.manager ==
      SparkManager::STANDALONE) // the worker starts the executor's JVM with its heap; no container overhead
    return p.executor_memory.value;
  return p.executor_memory.value + std::max(384.0 * 1048576.0, 0.10 * p.executor_memory.value);
}

SparkRun::SparkRun(ActorRuntime& runtime, const std::vector<SparkApplication>& apps, const SparkSetup& setup)
    : rt_(runtime), apps_(apps), setup_(setup), p_(*setup.params),
      cluster_(runtime, *setup.layout, std::vector<double>(setup.layout->hosts(), 1.0), setup.stragglers),
      rng_(setup.seed ^ 0x5a4b3c2d1e0fULL)
{
  const int hosts = setup.layout->hosts();
  free_cores_.assign(hosts, setup.platform->host.cores);
  free_memory_.assign(hosts, setup.platform->host.memory_bytes);
  state_.resize(apps.size());
  out_.apps.resize(apps.size());
  out_.cluster_cores = hosts * setup.platform->host.cores;
  setup_.cache->bind(*this);
  for (std::size_t a = 0; a < apps.size(); ++a) {
    state_[a].spec = &apps[a];
    out_.apps[a].submit = apps[a].submit_s;
    plan_app(static_cast<int>(a));
  }
}

SparkOutcome SparkRun::run()
{
  rt_.run(0, [this] { master(); });
  out_.activities = cluster_.activities();
  return std::move(out_);
}

void SparkRun::master()
{
  wake_ = rt_.make_signal();
  while (apps_done_ < static_cast<int>(apps_.size())) {
    const double now = rt_.now();
    admit(now);
    for (std::size_t a = 0; a < state_.size(); ++a)
      if (state_[a].admitted && !state_[a].done) {
        advance_jobs(static_cast<int>(a), now);
        provision(static_cast<int>(a), now);
      }
    grant(now);
    register_ready(now); // after granting: an executor without start-up delay takes tasks at once
    for (std::size_t a = 0; a < state_.size(); ++a)
      if (state_[a].admitted && !state_[a].done)
        schedule(static_cast<int>(a), now);
    sample_cores(now);
    if (apps_done_ == static_cast<int>(apps_.size()))
      break;
    wake_->wait_until(next_wake(now));
  }
  out_.makespan = rt_.now();
}

void SparkRun::admit(double now)
{
  while (next_app_ < apps_.size() && apps_[next_app_].submit_s <= now + 1e-12) {
    const int a = static_cast<int>(next_app_++);
    auto& s = state_[a];
    s.admitted = true;
    s.job_ready_at = now;
    s.requested = std::max(0, setup_.provisioning->initial_executors(view_of(a, now)));
  }
}

// Requests are served in submission order (FIFO, both managers). YARN puts an executor on the host with the most
// free cores that can hold its container; the standalone master takes workers round-robin (spreadOut).
int SparkRun::place_executor()
{
  const double need_mem = executor_container_bytes(p_);
  const int hosts = static_cast<int>(free_cores_.size());
  int best = -1;
  for (int i = 0; i < hosts; ++i) {
    const int h = p_.manager == SparkManager::STANDALONE ? (next_worker_ + i) % hosts : i;
    if (free_cores_[h] < p_.executor_cores || free_memory_[h] < need_mem)
      continue;
    if (p_.manager == SparkManager::STANDALONE) {
      next_worker_ = (h + 1) % hosts;
      return h;
    }
    if (best < 0 || free_cores_[h] > free_cores_[best])
      best = h;
  }
  return best;
}

void SparkRun::grant(double now)
{
  const double need_mem = executor_container_bytes(p_);
  for (std::size_t a = 0; a < state_.size(); ++a) {
    auto& s = state_[a];
    while (s.admitted && !s.done && s.requested > 0) {
      const int best = place_executor();
      if (best < 0)
        return; // the cluster is full: later applications wait too (FIFO)
      ExecutorState e;
      e.id = static_cast<int>(execs_.size());
      e.app = static_cast<int>(a);
      e.host = best;
      e.cores = p_.executor_cores;
      e.granted = now;
      e.ready = now + p_.executor_startup.value;
      const auto& waits = apps_[a].executor_waits_s; // replay: no earlier than the log's k-th executor registered
      if (const auto k = static_cast<std::size_t>(out_.apps[a].executors_added); k < waits.size())
        e.ready = std::max(e.ready, apps_[a].submit_s + waits[k]);
      free_cores_[best] -= e.cores;
      free_memory_[best] -= need_mem;
      allocated_cores_ += e.cores;
      execs_.push_back(e);
      s.executors.push_back(e.id);
      --s.requested;
      ++out_.apps[a].executors_added;
    }
  }
}

void SparkRun::register_ready(double now)
{
  for (auto& e : execs_)
    if (!e.alive && !e.released && e.ready <= now + 1e-12) {
      e.alive = true;
      e.idle_since = now;
      e.window_start = now;
      e.busy_since = now;
      setup_.cache->add_executor({e.id, e.app, e.host, executor_storage_bytes(p_)});
      auto& rec = out_.apps[e.app];
      if (rec.first_executor < 0)
        rec.first_executor = now;
      int live = 0;
      for (int id : state_[e.app].executors)
        live += execs_[id].alive;
      rec.peak_executors = std::max(rec.peak_executors, live);
    }
}

AppView SparkRun::view_of(int a, double now) const
{
  const auto& s = state_[a];
  AppView v;
  v.app = a;
  v.now = now;
  v.max_executors = s.spec->max_executors;
  v.slots_per_executor = p_.executor_cores;
  v.requested = s.requested;
  v.backlog_since = s.backlog_since;
  v.iteration_ended = s.iteration_ended;
  for (const auto& r : s.running) {
    v.pending_tasks += static_cast<int>(r.pending.size());
    v.running_tasks += r.running;
  }
  for (int id : s.executors) {
    const auto& e = execs_[id];
    if (e.released || e.leaving)
      continue;
    if (!e.alive) { // granted, starting: counts as requested
      ++v.requested;
      continue;
    }
    const double window = std::max(now - e.window_start, 1e-9);
    const double busy = e.window_busy + e.busy * (now - e.busy_since);
    v.executors.push_back({e.id, e.cores, e.busy, e.busy > 0 ? -1 : e.idle_since, busy / (e.cores * window),
                           setup_.cache->cached_bytes(e.id), executor_storage_bytes(p_)});
  }
  return v;
}

void SparkRun::provision(int a, double now)
{
  auto& s = state_[a];
  if (!s.iteration_ended && now + 1e-12 < s.next_decision)
    return;
  s.next_decision = now + p_.tick.value;
  const ProvisioningAction act = setup_.provisioning->decide(view_of(a, now));
  if (s.iteration_ended) { // the next iteration's utilisation window starts now
    s.iteration_ended = false;
    for (int id : s.executors) {
      auto& e = execs_[id];
      e.window_busy = 0;
      e.window_start = now;
      e.busy_since = now;
    }
  }
  s.requested += std::max(0, act.add);
  std::vector<int> victims; // all marked leaving first, so none is chosen as another's migration target
  for (int id : act.remove) {
    if (id < 0 || id >= static_cast<int>(execs_.size()) || execs_[id].app != a)
      throw std::logic_error("spark provisioning released an executor of another application");
    auto& e = execs_[id];
    if (e.alive && !e.leaving && e.busy == 0) {
      e.leaving = true;
      victims.push_back(id);
    }
  }
  for (int id : victims)
    release_executor(id, act.migrate_cache);
}

// Releasing an executor: its cached blocks are lost, or first copied to the application's other executors (iSpark),
// each block to the survivor holding the fewest cached bytes so far.
void SparkRun::release_executor(int id, bool migrate)
{
  auto& e = execs_[id];
  std::vector<std::pair<CachedBlock, int>> moves; // block, target executor
  if (migrate) {
    std::map<int, double> load; // survivors: cached bytes, including what they receive
    for (int other : state_[e.app].executors)
      if (other != id && execs_[other].alive && !execs_[other].leaving)
        load[other] = setup_.cache->cached_bytes(other);
    for (const auto& b : setup_.cache->blocks_of(id)) {
      if (load.empty())
        break;
      auto to =
          std::min_element(load.begin(), load.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
      to->second += b.bytes;
      moves.emplace_back(b, to->first);
    }
  }
  auto finish = [this, id, moves] {
    auto& ex = execs_[id];
    if (ex.released) // the application ended while the blocks moved
      return;
    const double now = rt_.now();
    const auto lost = setup_.cache->remove_executor(id);
    std::vector<CachedBlock> evicted;
    for (const auto& b : lost) {
      bool moved = false;
      for (const auto& [block, to] : moves)
        if (block.id == b.id && execs_[to].alive && !execs_[to].leaving) {
          CachedBlock copy = b;
          copy.owner = to;
          moved = setup_.cache->insert(copy, apps_[ex.app].rdds[b.id.rdd].storage, to, evicted);
        }
      out_.cache.blocks_lost += !moved;
    }
    out_.cache.evictions += static_cast<long>(evicted.size());
    give_back(ex, now);
    ++out_.apps[ex.app].executors_removed;
    std::erase(state_[ex.app].executors, id);
    wake_->notify();
  };
  if (moves.empty()) {
    finish();
    return;
  }
  rt_.spawn("migrate-" + std::to_string(id), e.host, [this, id, moves, finish] {
    std::map<int, double> per_host; // one flow per target host
    for (const auto& [block, to] : moves)
      per_host[execs_[to].host] += block.bytes;
    std::vector<ActivityPtr> flows;
    for (const auto& [h, bytes] : per_host) {
      out_.cache.bytes_migrated += bytes;
      if (h != execs_[id].host && ClusterRuntime::some(bytes))
        flows.push_back(cluster_.flow(execs_[id].host, h, bytes));
    }
    for (const auto& f : flows)
      rt_.wait(f);
    finish();
  });
}

void SparkRun::finish_app(int a, double now)
{
  auto& s = state_[a];
  s.done = true;
  ++apps_done_;
  out_.apps[a].finish = now;
  for (int id : std::vector<int>(s.executors)) {
    auto& e = execs_[id];
    if (e.released)
      continue;
    if (e.alive)
      setup_.cache->remove_executor(id);
    give_back(e, now);
  }
  s.executors.clear();
  s.requested = 0;
  setup_.cache->drop_application(a);
}

// The executor's container goes back to its host; its core-seconds are charged to its application.
void SparkRun::give_back(ExecutorState& e, double now)
{
  e.alive = false;
  e.released = true;
  free_cores_[e.host] += e.cores;
  free_memory_[e.host] += executor_container_bytes(p_);
  allocated_cores_ -= e.cores;
  out_.apps[e.app].allocated_core_s += e.cores * (now - e.granted);
}

void SparkRun::set_busy(ExecutorState& e, int delta, double now)
{
  e.window_busy += e.busy * (now - e.busy_since);
  e.busy_since = now;
  e.busy += delta;
  busy_cores_ += delta;
  if (e.busy == 0)
    e.idle_since = now;
}

void SparkRun::sample_cores(double now)
{
  if (!out_.cores.empty() && out_.cores.back().busy == busy_cores_ && out_.cores.back().allocated == allocated_cores_)
    return;
  if (!out_.cores.empty() && out_.cores.back().t == now)
    out_.cores.pop_back();
  out_.cores.push_back({now, busy_cores_, allocated_cores_});
}

double SparkRun::next_wake(double now) const
{
  double next = std::numeric_limits<double>::infinity();
  if (next_app_ < apps_.size())
    next = apps_[next_app_].submit_s;
  bool active = false;
  for (const auto& s : state_) {
    if (!s.admitted || s.done)
      continue;
    active = true;
    // The driver's work before the next job, or after the last (a job held for a migration is woken by it).
    double ready = next_job_at(static_cast<int>(&s - state_.data()));
    if (ready < 0 && s.open_jobs.empty())
      ready = s.job_ready_at + s.spec->driver_tail_s;
    if (ready > now && !std::isinf(ready))
      next = std::min(next, ready);
    for (const auto& r : s.running)
      if (!r.pending.empty() && r.level < 2 && p_.locality_wait.value > 0)
        next = std::min(next, r.last_launch + p_.locality_wait.value *
                                                  (1 + std::floor((now - r.last_launch) / p_.locality_wait.value)));
  }
  for (const auto& e : execs_)
    if (!e.alive && !e.released && e.ready > now)
      next = std::min(next, e.ready);
  if (active)
    next = std::min(next, now + p_.tick.value);
  return std::isinf(next) ? -1 : std::max(next, now + 1e-9);
}

SparkOutcome simulate_spark(ActorRuntime& runtime, const std::vector<SparkApplication>& apps, const SparkSetup& setup)
{
  SparkRun run(runtime, apps, setup);
  return run.run();
}

} // namespace cs
