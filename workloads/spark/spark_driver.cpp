#include "models/dataflow/hdfs_placement.hpp"
#include "workloads/spark/spark_run.hpp"

#include <algorithm>
#include <cmath>

namespace cs {

// The stages in the order the application will run them (a stage whose shuffle output exists is skipped), and for
// each RDD the positions of the stages that compute through it: what LRC and MRD know of the future.
void SparkRun::plan_app(int a)
{
  auto& s = state_[a];
  const auto& app = *s.spec;
  std::vector<char> seen(app.stages.size(), 0);
  for (const auto& job : app.jobs)
    for (int st : job.stages)
      if (!seen[st] || app.stages[st].shuffle_write_bytes <= 0) { // result stages run again in every job naming them
        seen[st] = 1;
        s.plan.push_back(st);
      }
  s.readers.assign(app.rdds.size(), {});
  for (std::size_t pos = 0; pos < s.plan.size(); ++pos)
    for (int r : app.rdds_of_stage(s.plan[pos]))
      s.readers[r].push_back(static_cast<int>(pos));
  s.stage_done.assign(app.stages.size(), 0);
  s.map_host.assign(app.stages.size(), {});
  s.stage_partition_done.assign(app.stages.size(), {});
}

int SparkRun::references(const BlockId& b) const
{
  const auto& s = state_[b.app];
  int refs = 0;
  for (int pos : s.readers[b.rdd]) {
    if (pos < static_cast<int>(s.position))
      continue;
    const auto& done = s.stage_partition_done[s.plan[pos]];
    refs += pos > static_cast<int>(s.position) || done.empty() || !done[b.partition];
  }
  return refs;
}

int SparkRun::distance(const BlockId& b) const
{
  const auto& s = state_[b.app];
  for (int pos : s.readers[b.rdd]) {
    if (pos < static_cast<int>(s.position))
      continue;
    const auto& done = s.stage_partition_done[s.plan[pos]];
    if (pos > static_cast<int>(s.position) || done.empty() || !done[b.partition])
      return pos - static_cast<int>(s.position);
  }
  return kNever;
}

void SparkRun::advance_jobs(int a, double now)
{
  auto& s = state_[a];
  const auto& app = *s.spec;
  if (s.job_open < 0) {
    if (s.next_job >= static_cast<int>(app.jobs.size())) {
      finish_app(a, now);
      return;
    }
    if (now + 1e-12 < s.job_ready_at + app.jobs[s.next_job].driver_s)
      return;                  // the driver is still working; woken when it is done
    for (int id : s.executors) // cached blocks being migrated (iSpark): the next iteration starts once they arrive
      if (execs_[id].leaving && !execs_[id].released)
        return;
    s.job_open = s.next_job++;
  }
  const auto& job = app.jobs[s.job_open];
  // Submit every stage of the job whose parents are done (shuffle map stages already done are skipped).
  for (int st : job.stages) {
    const bool running = std::any_of(s.running.begin(), s.running.end(), [&](const auto& r) { return r.stage == st; });
    if (running || s.stage_done[st])
      continue;
    const auto parents = app.parent_stages(st);
    if (std::all_of(parents.begin(), parents.end(), [&](int q) { return s.stage_done[q]; }))
      submit_stage(a, st, now);
  }
}

void SparkRun::submit_stage(int a, int st, double now)
{
  auto& s = state_[a];
  const auto& app = *s.spec;
  StageRun r;
  r.stage = st;
  r.total = app.stages[st].task_count(app.rdds);
  r.start = now;
  r.last_launch = now;
  const int partitions = app.rdds[app.stages[st].rdd].partitions;
  r.pref_exec.resize(partitions);
  r.pref_host.resize(partitions);
  const auto rdds = app.rdds_of_stage(st);
  for (int j = 0; j < r.total; ++j) {
    const int p = app.stages[st].partition_of(j, app.rdds);
    r.pending.push_back(p);
    // Spark's getPreferredLocs: walking the lineage from the stage's RDD, the first RDD that has locations gives
    // them, its cached copies if it is cached, else its input's HDFS replicas.
    for (auto rd = rdds.rbegin(); rd != rdds.rend() && r.pref_host[p].empty(); ++rd) {
      if (app.rdds[*rd].storage != StorageLevel::NONE)
        for (int e : setup_.cache->holders({a, *rd, p})) {
          r.pref_exec[p].push_back(e);
          r.pref_host[p].push_back(execs_[e].host);
        }
      if (app.rdds[*rd].input_bytes > 0 && r.pref_host[p].empty())
        for (int h : replicas(a, *rd, p))
          r.pref_host[p].push_back(h);
    }
  }
  s.stage_partition_done[st].assign(partitions, 0);
  s.map_host[st].assign(partitions, -1);
  s.running.push_back(std::move(r));
}

const std::vector<int>& SparkRun::replicas(int a, int rdd, int p)
{
  const BlockId id{a, rdd, p};
  auto it = replicas_.find(id);
  if (it == replicas_.end())
    it = replicas_.emplace(id, place_block(*setup_.layout, -1, p_.replication, rng_)).first;
  return it->second;
}

int SparkRun::task_level(const StageRun& r, int p, const ExecutorState& e, const std::vector<char>& live_hosts) const
{
  // Preferences on executors that can no longer take tasks do not count (Spark's valid locality levels consider live
  // executors only): such a task runs anywhere at once instead of waiting for them.
  bool any_live = false;
  for (int x : r.pref_exec[p]) {
    const auto& holder = execs_[x];
    if (!holder.alive || holder.leaving)
      continue;
    if (x == e.id)
      return 0;
    any_live = true;
  }
  for (int h : r.pref_host[p]) {
    if (h == e.host)
      return 1;
    any_live = any_live || live_hosts[h];
  }
  return any_live ? 2 : 0;
}

/** Per host: whether application `a` has an executor there that takes tasks. */
std::vector<char> SparkRun::live_hosts(int a) const
{
  std::vector<char> live(free_cores_.size(), 0);
  for (int id : state_[a].executors)
    if (execs_[id].alive && !execs_[id].leaving)
      live[execs_[id].host] = 1;
  return live;
}

// Spark's delay scheduling: a task set launches at a less local level only after locality_wait has passed without
// a launch at its current level; a launch at a better level brings the task set back to it.
void SparkRun::schedule(int a, double now)
{
  auto& s = state_[a];
  const double wait = p_.locality_wait.value;
  const std::vector<char> live = live_hosts(a);
  for (int id : s.executors) {
    auto& e = execs_[id];
    if (!e.alive || e.leaving)
      continue;
    while (e.busy < e.cores) {
      bool launched = false;
      for (auto& r : s.running) {
        if (r.pending.empty())
          continue;
        const int allowed =
            wait > 0 ? std::min(2, r.level + static_cast<int>(std::floor((now - r.last_launch) / wait + 1e-9))) : 2;
        std::size_t best = 0;
        int best_level = 3;
        for (std::size_t i = 0; i < r.pending.size() && best_level > 0; ++i) {
          const int level = task_level(r, r.pending[i], e, live);
          if (level < best_level) {
            best_level = level;
            best = i;
          }
        }
        if (best_level > allowed)
          continue;
        const int p = r.pending[best];
        r.pending.erase(r.pending.begin() + static_cast<long>(best));
        ++r.running;
        r.last_launch = now;
        r.level = best_level;
        set_busy(e, +1, now);
        rt_.spawn("task", e.host, [this, a, st = r.stage, p, id, now, best_level] {
          run_task(a, st, p, id);
          on_task_end(a, st, p, id, now, best_level);
        });
        launched = true;
        break;
      }
      if (!launched)
        break;
    }
  }
  int pending = 0;
  for (const auto& r : s.running)
    pending += static_cast<int>(r.pending.size());
  if (pending == 0)
    s.backlog_since = -1;
  else if (s.backlog_since < 0)
    s.backlog_since = now;
}

void SparkRun::on_task_end(int a, int st, int p, int id, double start, int level)
{
  const double now = rt_.now();
  auto& s = state_[a];
  auto& e = execs_[id];
  if (s.done) // its application ended while it ran (a log that stops mid-job): it is left out
    return;
  set_busy(e, -1, now);
  out_.apps[a].busy_core_s += now - start;
  out_.tasks.push_back({a, st, p, id, e.host, level, start, now});
  s.map_host[st][p] = e.host;
  s.stage_partition_done[st][p] = 1;
  auto it = std::find_if(s.running.begin(), s.running.end(), [&](const auto& r) { return r.stage == st; });
  --it->running;
  if (++it->done == it->total) {
    out_.stages.push_back({a, st, it->total, it->start, now});
    s.running.erase(it);
    const auto& job = s.spec->jobs[s.job_open];
    s.stage_done[st] = 1;
    while (s.position < s.plan.size() && s.stage_done[s.plan[s.position]])
      ++s.position;
    if (st == job.stages.back()) { // the job's action returned to the driver
      s.job_open = -1;
      s.job_ready_at = now;
      s.iteration_ended = true;
      for (std::size_t q = 0; q < s.stage_done.size(); ++q) // result stages may run again in a later job
        if (s.spec->stages[q].shuffle_write_bytes <= 0)
          s.stage_done[q] = 0;
    }
  }
  wake_->notify();
}

} // namespace cs
