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

/** Per stage id: the successful attempt of each task index (the first to finish when speculation ran two). */
std::map<int, std::map<int, const SparkLogTask*>> successful_tasks(const SparkEventLog& log)
{
  std::map<int, std::map<int, const SparkLogTask*>> out;
  for (const auto& t : log.tasks) {
    if (t.failed || t.killed)
      continue;
    auto& slot = out[t.stage][t.index];
    if (!slot || t.finish_s < slot->finish_s)
      slot = &t;
  }
  return out;
}

/** The stages `id` reads shuffle output from: as the log names them (Spark 1.4+), else, when its tasks read shuffle
 *  bytes, the earlier stages of its job that wrote some (older logs record no stage parents). */
std::vector<int> parents_of(const SparkEventLog& log, int id, const std::map<int, const SparkLogTask*>& tasks)
{
  for (const auto& s : log.stages)
    if (s.id == id && !s.parents.empty())
      return s.parents;
  double read = 0;
  for (const auto& [i, t] : tasks)
    read += t->shuffle_remote_bytes + t->shuffle_local_bytes;
  std::vector<int> out;
  if (read <= 0)
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

} // namespace

SparkApplication application_from_log(const SparkEventLog& log, int executors)
{
  SparkApplication app;
  app.name = log.app_name.empty() ? log.app_id : log.app_name;
  app.max_executors = executors > 0 ? executors : peak_executors(log);
  const auto tasks = successful_tasks(log);
  // A log copied while the application ran (or one that died) holds stages that never completed: their tasks are
  // left out, with the jobs that never ended, and the run says so.
  std::set<int> completed;
  for (const auto& s : log.stages)
    if (!s.failed)
      completed.insert(s.id);
  long unfinished_tasks = 0;
  std::set<int> unfinished_stages;
  std::map<int, int> index_of; // log stage id -> our stage
  for (const auto& [id, by_index] : tasks) {
    if (!completed.count(id)) {
      unfinished_tasks += static_cast<long>(by_index.size());
      unfinished_stages.insert(id);
      continue;
    }
    const int n = by_index.rbegin()->first + 1;
    Rdd rdd;
    rdd.name = "stage-" + std::to_string(id);
    rdd.partitions = n;
    Stage stage;
    stage.task_seconds.assign(n, 0.0);
    double write = 0, output = 0;
    for (const auto& [i, t] : by_index) {
      // The slot's recorded time (launch to finish: deserialisation, run, result serialisation and scheduler delay)
      // less what the simulator prices itself (shuffle fetch waits and shuffle writes).
      stage.task_seconds[i] = std::max(0.0, t->finish_s - t->launch_s - t->fetch_wait_s - t->shuffle_write_s);
      write += t->shuffle_write_bytes;
      output += t->output_bytes;
    }
    stage.shuffle_write_bytes = write / n;
    stage.output_bytes = output / n;
    for (int parent : parents_of(log, id, by_index))
      if (auto it = index_of.find(parent); it != index_of.end() && app.stages[it->second].shuffle_write_bytes > 0)
        if (std::find(rdd.shuffle_stages.begin(), rdd.shuffle_stages.end(), it->second) == rdd.shuffle_stages.end())
          rdd.shuffle_stages.push_back(it->second);
    app.rdds.push_back(std::move(rdd));
    stage.rdd = static_cast<int>(app.rdds.size()) - 1;
    app.stages.push_back(std::move(stage));
    index_of[id] = static_cast<int>(app.stages.size()) - 1;
  }
  double previous_end = -1;
  for (const auto& j : log.jobs) {
    SparkJob job;
    for (int id : j.stages)
      if (auto it = index_of.find(id); it != index_of.end())
        job.stages.push_back(it->second);
    if (job.stages.empty())
      continue;
    std::sort(job.stages.begin(), job.stages.end());
    job.driver_s = previous_end < 0 ? 0 : std::max(0.0, j.submit_s - previous_end);
    previous_end = j.end_s >= 0 ? j.end_s : j.submit_s;
    app.jobs.push_back(std::move(job));
  }
  const long open_jobs = std::count_if(log.jobs.begin(), log.jobs.end(), [](const auto& j) { return j.end_s < 0; });
  if (unfinished_tasks > 0 || open_jobs > 0)
    app.left_out.push_back(fmt::format("{}: the log ends before its application did: {} job(s) never ended; {} "
                                       "task(s) of {} stage(s) that never completed are left out of the replay",
                                       app.name, open_jobs, unfinished_tasks, unfinished_stages.size()));
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
      app = application_from_log(read_spark_event_log(path.string()), a.executors);
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
