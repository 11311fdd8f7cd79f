#include "models/dataflow/hdfs_placement.hpp"
#include "workloads/spark/spark_run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

// When the driver submits its next job: its work after the last job ended, or for a job submitted beside the
// previous one, after that one's submission; infinity while it waits for open jobs to end, -1 after the last job.
double SparkRun::next_job_at(int a) const
{
  const auto& s = state_[a];
  const auto& jobs = s.spec->jobs;
  if (s.next_job >= static_cast<int>(jobs.size()))
    return -1;
  const SparkJob& job = jobs[s.next_job];
  if (job.with_previous && s.next_job > 0)
    return s.last_submit + job.driver_s;
  return s.open_jobs.empty() ? s.job_ready_at + job.driver_s : std::numeric_limits<double>::infinity();
}

void SparkRun::advance_jobs(int a, double now)
{
  auto& s = state_[a];
  const auto& app = *s.spec;
  for (double at = next_job_at(a); at >= 0 && now + 1e-12 >= at; at = next_job_at(a)) {
    for (int id : s.executors) // cached blocks being migrated (iSpark): the next iteration starts once they arrive
      if (execs_[id].leaving && !execs_[id].released)
        return;
    s.open_jobs.push_back(s.next_job++);
    s.last_submit = now;
  }
  if (s.open_jobs.empty() && s.next_job >= static_cast<int>(app.jobs.size())) {
    if (now + 1e-12 >= s.job_ready_at + app.driver_tail_s) // the driver's work after its last job
      finish_app(a, now);
    return;
  }
  // Submit every stage of the open jobs whose parents are done (shuffle map stages already done are skipped).
  for (int j : s.open_jobs)
    for (int st : app.jobs[j].stages) {
      const bool running =
          std::any_of(s.running.begin(), s.running.end(), [&](const auto& r) { return r.stage == st; });
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
  r.run = s.runs++;
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
  r.attempt.assign(partitions, 0);
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
        const Launch l{a, r.stage, r.run, p, id, best_level, r.attempt[p]++, now};
        rt_.spawn("task", e.host,
                  [this, l] { on_task_end(l, !run_task(l.app, l.stage, l.partition, l.executor, l.attempt)); });
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

void SparkRun::on_task_end(const Launch& l, bool failed)
{
  const double now = rt_.now();
  auto& s = state_[l.app];
  auto& e = execs_[l.executor];
  if (s.done) // its application ended while it ran (a log that stops mid-job): it is left out
    return;
  set_busy(e, -1, now);
  out_.apps[l.app].busy_core_s += now - l.start;
  out_.tasks.push_back({l.app, l.stage, l.partition, l.executor, e.host, l.level, l.start, now, failed});
  out_.failed_attempts += failed;
  auto it = std::find_if(s.running.begin(), s.running.end(), [&](const auto& r) { return r.run == l.run; });
  if (it == s.running.end()) { // its stage was aborted while it ran: only its slot is freed
    wake_->notify();
    return;
  }
  --it->running;
  if (failed) {
    // Spark sends a failed task back to its task set; a task that has used up its attempts aborts the stage.
    const Stage& stage = s.spec->stages[l.stage];
    const bool more = l.attempt + 1 < static_cast<int>(stage.failed_attempt_s[l.partition].size());
    if (more || stage.gives_up.empty() || !stage.gives_up[l.partition]) {
      it->pending.insert(it->pending.begin(), l.partition);
    } else {
      out_.stages.push_back({l.app, l.stage, it->total, it->start, now, true});
      abort_jobs(l.app, l.stage, now);
    }
    wake_->notify();
    return;
  }
  s.map_host[l.stage][l.partition] = e.host;
  s.stage_partition_done[l.stage][l.partition] = 1;
  if (++it->done == it->total) {
    out_.stages.push_back({l.app, l.stage, it->total, it->start, now, false});
    s.running.erase(it);
    s.stage_done[l.stage] = 1;
    while (s.position < s.plan.size() && s.stage_done[s.plan[s.position]])
      ++s.position;
    for (int j : std::vector<int>(s.open_jobs)) // the job's action returned to the driver
      if (l.stage == s.spec->jobs[j].stages.back())
        end_job(l.app, j, now);
  }
  wake_->notify();
}

// A job ends: the driver takes over, and result stages may run again in a later job.
void SparkRun::end_job(int a, int job, double now)
{
  auto& s = state_[a];
  std::erase(s.open_jobs, job);
  s.job_ready_at = now;
  s.iteration_ended = true;
  for (std::size_t q = 0; q < s.stage_done.size(); ++q)
    if (s.spec->stages[q].shuffle_write_bytes <= 0)
      s.stage_done[q] = 0;
}

// A task gave up (replay): Spark aborts every open job that needs its stage, and the driver goes on. Their running
// tasks end on their own and free their slots; the jobs' unfinished stages count as passed for the cache's view of
// the future.
void SparkRun::abort_jobs(int a, int stage, double now)
{
  auto& s = state_[a];
  const auto& jobs = s.spec->jobs;
  for (int j : std::vector<int>(s.open_jobs)) {
    const auto& stages = jobs[j].stages;
    if (std::find(stages.begin(), stages.end(), stage) == stages.end())
      continue;
    auto in_job = [&](int st) { return std::find(stages.begin(), stages.end(), st) != stages.end(); };
    std::erase_if(s.running, [&](const StageRun& r) { return in_job(r.stage); });
    ++out_.failed_jobs;
    const std::vector<char> done = s.stage_done; // what finished keeps its output; the rest has none
    for (int st : stages)
      s.stage_done[st] = 1;
    while (s.position < s.plan.size() && s.stage_done[s.plan[s.position]])
      ++s.position;
    s.stage_done = done;
    end_job(a, j, now);
  }
}

} // namespace cs
