// Spark applications rebuilt from event logs, and the list of every application a scenario asks for.
#include "workloads/spark/spark_apps.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>
#include <stdexcept>

namespace cs {
namespace {

/** A task index's attempts: the one that succeeded (the first to finish when speculation ran two) and those that
 *  failed, in launch order. Killed attempts (a speculative copy that lost, a task killed as its job ended) are
 *  counted apart and not replayed. */
struct TaskAttempts {
  const SparkLogTask* success = nullptr;
  std::vector<const SparkLogTask*> failed;
};

bool was_killed(const SparkLogTask& t) { return t.killed || t.end_reason == "TaskKilled"; }

std::map<int, std::map<int, TaskAttempts>> attempts_by_stage(const SparkEventLog& log, long& killed)
{
  std::map<int, std::map<int, TaskAttempts>> out;
  for (const auto& t : log.tasks) {
    if (was_killed(t)) {
      ++killed;
      continue;
    }
    auto& slot = out[t.stage][t.index];
    if (t.failed) {
      slot.failed.push_back(&t);
    } else if (!slot.success || t.finish_s < slot.success->finish_s) {
      slot.success = &t;
    }
  }
  for (auto& [stage, by_index] : out)
    for (auto& [index, a] : by_index)
      std::stable_sort(a.failed.begin(), a.failed.end(),
                       [](const SparkLogTask* x, const SparkLogTask* y) { return x->launch_s < y->launch_s; });
  return out;
}

/** The stages `id` reads shuffle output from: as the log names them (Spark 1.4+), else, when its tasks read shuffle
 *  bytes, the earlier stages of its job that wrote some (older logs record no stage parents). */
std::vector<int> parents_of(const SparkEventLog& log, int id, const std::map<int, TaskAttempts>& tasks)
{
  for (const auto& s : log.stages)
    if (s.id == id && !s.parents.empty())
      return s.parents;
  // Blocks count as well as bytes: Spark 1.2 records no local bytes, so a stage that reads only local shuffle blocks
  // shows 0 bytes read.
  auto reads_shuffle = [](const SparkLogTask* t) {
    return t && (t->shuffle_remote_bytes + t->shuffle_local_bytes > 0 || t->shuffle_blocks > 0);
  };
  bool reads = false;
  for (const auto& [i, a] : tasks)
    reads = reads || reads_shuffle(a.success) || std::any_of(a.failed.begin(), a.failed.end(), reads_shuffle);
  std::vector<int> out;
  if (!reads)
    return out;
  for (const auto& j : log.jobs)
    if (std::find(j.stages.begin(), j.stages.end(), id) != j.stages.end())
      for (int s : j.stages)
        if (s < id)
          out.push_back(s);
  return out;
}

/** The log's most executors alive at once. */
int peak_executors(const SparkEventLog& log)
{
  std::vector<std::pair<double, int>> events;
  for (const auto& e : log.executors) {
    events.emplace_back(e.added_s, +1);
    if (e.removed_s >= 0)
      events.emplace_back(e.removed_s, -1);
  }
  std::sort(events.begin(), events.end());
  int alive = 0, peak = 0;
  for (const auto& [t, d] : events)
    peak = std::max(peak, alive += d);
  return std::max(peak, 1);
}

/** The stage a log's tasks of stage `id` become: recorded times, bytes, failed attempts. */
Stage stage_from_log(const std::map<int, TaskAttempts>& by_index)
{
  const int n = by_index.rbegin()->first + 1;
  Stage stage;
  stage.task_seconds.assign(n, 0.0);
  double write = 0, output = 0;
  for (const auto& [i, a] : by_index) {
    for (const SparkLogTask* f : a.failed) {
      stage.failed_attempt_s.resize(n);
      stage.failed_attempt_s[i].push_back(std::max(0.0, f->finish_s - f->launch_s));
    }
    if (!a.success) {
      stage.gives_up.resize(n, 0);
      stage.gives_up[i] = 1;
      continue;
    }
    const SparkLogTask* t = a.success;
    // The slot's recorded time (launch to finish: deserialisation, run, result serialisation and scheduler delay)
    // less what the simulator prices itself (shuffle fetch waits and shuffle writes).
    stage.task_seconds[i] = std::max(0.0, t->finish_s - t->launch_s - t->fetch_wait_s - t->shuffle_write_s);
    write += t->shuffle_write_bytes;
    output += t->output_bytes;
  }
  stage.shuffle_write_bytes = write / n;
  stage.output_bytes = output / n;
  return stage;
}

/** The log's reads of persisted RDDs: each task of a stage whose lineage holds an RDD persisted by an earlier stage
 *  reads a partition of it; Spark 1.x and 2.x also mark the reads served from memory (Data Read Method). */
void recorded_cache_reads(const SparkEventLog& log, const std::map<int, std::map<int, TaskAttempts>>& tasks,
                          SparkApplication& app)
{
  app.recorded_cache_reads = 0;
  std::set<int> stored; // persisted RDDs an earlier stage computed
  for (const auto& s : log.stages) {
    if (s.failed)
      continue;
    const auto it = tasks.find(s.id);
    const long n = it == tasks.end() ? 0 : static_cast<long>(it->second.size());
    for (const auto& r : s.rdds)
      if ((r.use_memory || r.use_disk) && stored.count(r.id))
        app.recorded_cache_reads += n;
    for (const auto& r : s.rdds)
      if (r.use_memory || r.use_disk)
        stored.insert(r.id);
  }
  for (const auto& t : log.tasks)
    app.recorded_memory_reads += !t.failed && t.read_method == "Memory";
}

/** Driver time before the first job and after the last, and the executors' recorded registrations. */
void recorded_waits(const SparkEventLog& log, SparkApplication& app, bool executor_waits)
{
  double last_end = -1;
  for (const auto& j : log.jobs)
    last_end = std::max(last_end, j.end_s);
  if (log.end_s >= 0 && last_end >= 0)
    app.driver_tail_s = std::max(0.0, log.end_s - last_end);
  if (!executor_waits)
    return;
  // An executor registered no later than its first task launched, whatever its clock said (a log whose executor
  // events are dated years after its tasks exists); one that ran nothing counts if it came before the last launch.
  std::map<std::string, double> first_launch;
  double last_launch = 0;
  for (const auto& t : log.tasks) {
    auto [it, added] = first_launch.emplace(t.executor, t.launch_s);
    it->second = std::min(it->second, t.launch_s);
    last_launch = std::max(last_launch, t.launch_s);
  }
  for (const auto& e : log.executors) {
    const auto it = first_launch.find(e.id);
    const double registered = it != first_launch.end() ? std::min(e.added_s, it->second) : e.added_s;
    if (registered > 0 && registered <= last_launch)
      app.executor_waits_s.push_back(registered);
  }
  std::sort(app.executor_waits_s.begin(), app.executor_waits_s.end());
  if (app.executor_waits_s.size() > static_cast<std::size_t>(app.max_executors)) // later ones answered demand
    app.executor_waits_s.resize(app.max_executors);
}

} // namespace

SparkApplication application_from_log(const SparkEventLog& log, int executors, bool executor_waits)
{
  SparkApplication app;
  app.name = log.app_name.empty() ? log.app_id : log.app_name;
  app.max_executors = executors > 0 ? executors : peak_executors(log);
  long killed = 0;
  const auto tasks = attempts_by_stage(log, killed);
  // A stage is replayed when an attempt of it completed, or when it failed because a task gave up (the replay runs
  // it to that failure, which fails its job). A log copied while the application ran (or one that died) holds
  // stages that did neither: their tasks are left out, with the jobs that never ended, and the run says so.
  std::set<int> completed, failed;
  for (const auto& s : log.stages)
    (s.failed ? failed : completed).insert(s.id);
  long unfinished_tasks = 0, failed_attempts = 0;
  std::set<int> unfinished_stages;
  std::map<int, int> index_of; // log stage id -> our stage
  for (const auto& [id, by_index] : tasks) {
    const bool gave_up = std::any_of(by_index.begin(), by_index.end(), [](const auto& a) { return !a.second.success; });
    if (!completed.count(id) && !(failed.count(id) && gave_up)) {
      unfinished_tasks += static_cast<long>(by_index.size());
      unfinished_stages.insert(id);
      continue;
    }
    Stage stage = stage_from_log(by_index);
    for (const auto& attempts : stage.failed_attempt_s)
      failed_attempts += static_cast<long>(attempts.size());
    Rdd rdd;
    rdd.name = "stage-" + std::to_string(id);
    rdd.partitions = static_cast<int>(stage.task_seconds.size());
    for (int parent : parents_of(log, id, by_index))
      if (auto it = index_of.find(parent); it != index_of.end() && app.stages[it->second].shuffle_write_bytes > 0)
        if (std::find(rdd.shuffle_stages.begin(), rdd.shuffle_stages.end(), it->second) == rdd.shuffle_stages.end())
          rdd.shuffle_stages.push_back(it->second);
    app.rdds.push_back(std::move(rdd));
    stage.rdd = static_cast<int>(app.rdds.size()) - 1;
    app.stages.push_back(std::move(stage));
    index_of[id] = static_cast<int>(app.stages.size()) - 1;
  }
  // Driver time between jobs, and before the first (from the application's start: SparkContext's start and what
  // the program does before its first action), as recorded. A job submitted before the previous one ended ran beside
  // it (the driver submitted it from another thread): its time counts from the previous submission.
  double previous_end = 0, previous_submit = -1;
  for (const auto& j : log.jobs) {
    SparkJob job;
    for (int id : j.stages)
      if (auto it = index_of.find(id); it != index_of.end())
        job.stages.push_back(it->second);
    if (job.stages.empty())
      continue;
    std::sort(job.stages.begin(), job.stages.end());
    job.with_previous = previous_submit >= 0 && j.submit_s >= 0 && j.submit_s < previous_end;
    const double from = job.with_previous ? previous_submit : previous_end;
    job.driver_s = j.submit_s < 0 ? 0 : std::max(0.0, j.submit_s - from);
    previous_end = std::max(previous_end, j.end_s >= 0 ? j.end_s : j.submit_s);
    previous_submit = std::max(previous_submit, j.submit_s);
    app.jobs.push_back(std::move(job));
  }
  recorded_waits(log, app, executor_waits);
  recorded_cache_reads(log, tasks, app);
  const long open_jobs = std::count_if(log.jobs.begin(), log.jobs.end(), [](const auto& j) { return !j.ended; });
  if (unfinished_tasks > 0 || open_jobs > 0)
    app.left_out.push_back(fmt::format("{}: the log ends before its application did: {} job(s) never ended; {} "
                                       "task(s) of {} stage(s) that never completed are left out of the replay",
                                       app.name, open_jobs, unfinished_tasks, unfinished_stages.size()));
  if (killed > 0)
    app.left_out.push_back(fmt::format("{}: {} killed task attempt(s) (speculative copies that lost, or tasks killed "
                                       "as their job ended) are not replayed; {} failed attempt(s) are",
                                       app.name, killed, failed_attempts));
  app.validate();
  return app;
}

std::vector<SparkApplication> spark_applications(const SparkParams& p, const std::string& base_dir)
{
  std::vector<SparkApplication> apps;
  for (const auto& a : p.applications) {
    SparkApplication app;
    if (!a.event_log.empty()) {
      const auto path = std::filesystem::path(base_dir) / a.event_log;
      app = application_from_log(read_spark_event_log(path.string()), a.executors, a.recorded_executor_waits);
    } else {
      app = hibench_application(a, p);
    }
    for (int c = 0; c < a.count; ++c) {
      SparkApplication copy = app;
      copy.submit_s = a.submit.value + c * a.interarrival.value;
      if (a.count > 1)
        copy.name += "#" + std::to_string(c + 1);
      apps.push_back(std::move(copy));
    }
  }
  std::stable_sort(apps.begin(), apps.end(), [](const auto& x, const auto& y) { return x.submit_s < y.submit_s; });
  return apps;
}

} // namespace cs
