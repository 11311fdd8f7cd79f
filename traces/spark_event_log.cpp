#include "traces/spark_event_log.hpp"
#include "traces/trace_format.hpp"

#include "base/input_error.hpp"
#include "traces/compressed_input.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace cs {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxLogBytes = std::size_t{1} << 30; // 1 GiB inflated

/** A used field of the wrong type: reported at its line by the caller. */
struct FieldError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json* member(const json& j, const char* key)
{
  if (!j.is_object())
    throw FieldError("expected an object");
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

double number(const json& j, const char* key, double fallback = 0)
{
  const json* v = member(j, key);
  if (!v)
    return fallback;
  if (!v->is_number())
    throw FieldError(fmt::format("field '{}' must be a number", key));
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < 0)
    throw FieldError(fmt::format("field '{}' must be a finite non-negative number", key));
  return x;
}

// Bounds that a real log cannot pass (a result of 1e288 seconds is a bad input, not an answer): epoch times before
// the year 5138, durations under a year, counters under 10 PB.
constexpr double kMaxEpochMs = 1e14, kMaxDurationMs = 3.2e10, kMaxBytes = 1e16;

double bounded(const json& j, const char* key, double limit, const char* what)
{
  const double x = number(j, key);
  if (x > limit)
    throw FieldError(fmt::format("field '{}' is {:g}: {} at most {:g}", key, x, what, limit));
  return x;
}

double epoch_ms(const json& j, const char* key) { return bounded(j, key, kMaxEpochMs, "an epoch time in ms is"); }
double duration_ms(const json& j, const char* key) { return bounded(j, key, kMaxDurationMs, "a duration in ms is"); }
double bytes(const json& j, const char* key) { return bounded(j, key, kMaxBytes, "a byte count is"); }

std::string text(const json& j, const char* key)
{
  const json* v = member(j, key);
  if (!v)
    return "";
  if (v->is_string())
    return v->get<std::string>();
  if (v->is_number_integer()) // Spark 1.x writes some ids as numbers
    return std::to_string(v->get<long long>());
  throw FieldError(fmt::format("field '{}' must be a string", key));
}

bool flag(const json& j, const char* key)
{
  const json* v = member(j, key);
  if (v && !v->is_boolean())
    throw FieldError(fmt::format("field '{}' must be true or false", key));
  return v && v->get<bool>();
}

const json& object(const json& j, const char* key)
{
  static const json empty = json::object();
  const json* v = member(j, key);
  if (!v)
    return empty;
  if (!v->is_object())
    throw FieldError(fmt::format("field '{}' must be an object", key));
  return *v;
}

std::vector<int> ints(const json& j, const char* key)
{
  std::vector<int> out;
  const json* v = member(j, key);
  if (!v)
    return out;
  if (!v->is_array())
    throw FieldError(fmt::format("field '{}' must be a list", key));
  for (const auto& x : *v) {
    if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() > 100000000)
      throw FieldError(fmt::format("field '{}' must list ids (non-negative integers)", key));
    out.push_back(static_cast<int>(x.get<long long>()));
  }
  return out;
}

int id_of(const json& j, const char* key) { return static_cast<int>(std::min(number(j, key), 1e8)); }

class LogBuilder {
public:
  explicit LogBuilder(SparkEventLog& log) : log_(log) {}

  double rel(double ms) const { return (ms - log_.start_ms) / 1000.0; }

  void event(const std::string& type, const json& e)
  {
    if (type == "SparkListenerLogStart") {
      log_.spark_version = text(e, "Spark Version");
    } else if (type == "SparkListenerApplicationStart") {
      log_.app_name = text(e, "App Name");
      log_.app_id = text(e, "App ID");
      log_.start_ms = epoch_ms(e, "Timestamp");
      started_ = true;
      for (auto& x : log_.executors) { // added before the application's start event (Spark 3 writes them first)
        x.added_s -= log_.start_ms / 1000.0;
        if (x.removed_s >= 0)
          x.removed_s -= log_.start_ms / 1000.0;
      }
    } else if (type == "SparkListenerApplicationEnd") {
      log_.end_s = rel(epoch_ms(e, "Timestamp"));
    } else if (type == "SparkListenerJobStart") {
      const double submit = member(e, "Submission Time") ? rel(epoch_ms(e, "Submission Time")) : -1;
      log_.jobs.push_back({id_of(e, "Job ID"), ints(e, "Stage IDs"), submit, -1, false, false});
    } else if (type == "SparkListenerJobEnd") {
      const int id = id_of(e, "Job ID");
      const std::string result = text(object(e, "Job Result"), "Result");
      for (auto& j : log_.jobs)
        if (j.id == id) {
          j.end_s = member(e, "Completion Time") ? rel(epoch_ms(e, "Completion Time")) : -1;
          j.ended = true;
          j.failed = !result.empty() && result != "JobSucceeded";
        }
    } else if (type == "SparkListenerStageCompleted") {
      stage(object(e, "Stage Info"));
    } else if (type == "SparkListenerTaskEnd") {
      task(e);
    } else if (type == "SparkListenerExecutorAdded") {
      const json& info = object(e, "Executor Info");
      log_.executors.push_back({text(e, "Executor ID"), text(info, "Host"),
                                std::max(1, static_cast<int>(std::min(number(info, "Total Cores", 1), 1e6))),
                                rel(epoch_ms(e, "Timestamp")), -1, ""});
    } else if (type == "SparkListenerExecutorRemoved") {
      const std::string id = text(e, "Executor ID");
      for (auto& x : log_.executors)
        if (x.id == id && x.removed_s < 0) {
          x.removed_s = rel(epoch_ms(e, "Timestamp"));
          x.removed_reason = text(e, "Removed Reason");
        }
    } else if (type == "SparkListenerBlockManagerAdded") {
      const json& bm = object(e, "Block Manager ID");
      block_managers_.emplace_back(text(bm, "Executor ID"), text(bm, "Host"));
    } else if (type != "SparkListenerStageSubmitted" && type != "SparkListenerTaskStart") {
      ++log_.unknown_events;
      ++log_.unknown_by_type[type];
    }
  }

  bool started() const { return started_; }

  /** Where the next event is read (for errors found after the whole log is read). */
  void at(const std::string& file, int line)
  {
    file_ = file;
    line_ = line;
  }

  /** A parent stage no job lists and no stage completion names: the log lost events or was edited. */
  void check_parents() const
  {
    std::set<int> known;
    for (const auto& j : log_.jobs)
      known.insert(j.stages.begin(), j.stages.end());
    for (const auto& s : log_.stages)
      known.insert(s.id);
    for (const auto& [where, stage] : stage_lines_)
      for (int parent : log_.stages[stage].parents)
        if (!known.count(parent))
          throw InputError(
              where.first, where.second, 1,
              fmt::format("stage {} names parent stage {}, which no job lists", log_.stages[stage].id, parent));
  }

  /** Local-mode logs have no ExecutorAdded: their one executor is the driver's block manager, with as many task
   *  slots as the largest first wave of any stage (the tasks launched within 10 ms of the stage's first launch). */
  void add_local_executors()
  {
    for (const auto& manager : block_managers_) {
      const std::string& id = manager.first; // (named: clang cannot capture structured bindings)
      if (std::any_of(log_.executors.begin(), log_.executors.end(), [&](const auto& x) { return x.id == id; }))
        continue;
      std::map<int, std::vector<double>> launches; // by stage
      for (const auto& t : log_.tasks)
        if (t.executor == id)
          launches[t.stage].push_back(t.launch_s);
      int cores = 0;
      for (auto& [stage, times] : launches) {
        const double first = *std::min_element(times.begin(), times.end());
        cores = std::max(cores, static_cast<int>(std::count_if(times.begin(), times.end(),
                                                               [&](double t) { return t <= first + 0.010; })));
      }
      if (cores > 0)
        log_.executors.push_back({id, manager.second, cores, 0, -1, ""});
    }
  }

private:
  void stage(const json& info)
  {
    SparkLogStage s;
    s.id = id_of(info, "Stage ID");
    s.attempt = id_of(info, "Stage Attempt ID");
    s.name = text(info, "Stage Name");
    s.tasks = id_of(info, "Number of Tasks");
    s.parents = ints(info, "Parent IDs");
    s.submit_s = member(info, "Submission Time") ? rel(epoch_ms(info, "Submission Time")) : -1;
    s.complete_s = member(info, "Completion Time") ? rel(epoch_ms(info, "Completion Time")) : -1;
    s.failed = !text(info, "Failure Reason").empty();
    for (int parent : s.parents) // Spark creates a stage's parents first, so their ids are smaller
      if (parent >= s.id)
        throw FieldError(fmt::format("stage {} names stage {} as its parent (a parent's id is smaller)", s.id, parent));
    stage_lines_.emplace_back(std::make_pair(file_, line_), static_cast<int>(log_.stages.size()));
    if (const json* rdds = member(info, "RDD Info")) {
      if (!rdds->is_array())
        throw FieldError("field 'RDD Info' must be a list");
      for (const auto& r : *rdds) {
        const json& level = object(r, "Storage Level");
        s.rdds.push_back({id_of(r, "RDD ID"), text(r, "Name"), ints(r, "Parent IDs"), flag(level, "Use Memory"),
                          flag(level, "Use Disk"), id_of(r, "Number of Partitions")});
      }
    }
    log_.stages.push_back(std::move(s));
  }

  void task(const json& e)
  {
    const json& info = object(e, "Task Info");
    const json& m = object(e, "Task Metrics");
    SparkLogTask t;
    t.stage = id_of(e, "Stage ID");
    t.stage_attempt = id_of(e, "Stage Attempt ID");
    t.index = id_of(info, "Index");
    t.attempt = id_of(info, "Attempt");
    t.executor = text(info, "Executor ID");
    t.host = text(info, "Host");
    t.locality = text(info, "Locality");
    t.launch_s = rel(epoch_ms(info, "Launch Time"));
    t.finish_s = rel(epoch_ms(info, "Finish Time"));
    if (t.finish_s < t.launch_s)
      throw FieldError(fmt::format("task {} of stage {} finishes before it launches", t.index, t.stage));
    t.failed = flag(info, "Failed");
    t.killed = flag(info, "Killed");
    t.speculative = flag(info, "Speculative");
    t.end_reason = text(object(e, "Task End Reason"), "Reason");
    t.run_s = duration_ms(m, "Executor Run Time") / 1000.0;
    t.deserialize_s = duration_ms(m, "Executor Deserialize Time") / 1000.0;
    const json& in = object(m, "Input Metrics");
    t.input_bytes = bytes(in, "Bytes Read");
    t.read_method = text(in, "Data Read Method");
    const json& sr = object(m, "Shuffle Read Metrics");
    t.shuffle_remote_bytes = bytes(sr, "Remote Bytes Read");
    t.shuffle_local_bytes = bytes(sr, "Local Bytes Read");
    t.shuffle_blocks =
        static_cast<long>(std::min(number(sr, "Local Blocks Fetched") + number(sr, "Remote Blocks Fetched"), 1e15));
    t.fetch_wait_s = duration_ms(sr, "Fetch Wait Time") / 1000.0;
    const json& sw = object(m, "Shuffle Write Metrics");
    t.shuffle_write_bytes = bytes(sw, "Shuffle Bytes Written");
    t.shuffle_write_s = bounded(sw, "Shuffle Write Time", kMaxDurationMs * 1e6, "a duration in ns is") / 1e9;
    t.output_bytes = bytes(object(m, "Output Metrics"), "Bytes Written");
    if (const json* blocks = member(m, "Updated Blocks"); blocks && blocks->is_array())
      for (const auto& b : *blocks)
        t.blocks_cached += text(b, "Block ID").rfind("rdd_", 0) == 0;
    if (std::none_of(log_.executors.begin(), log_.executors.end(), [&](const auto& x) { return x.id == t.executor; }) &&
        std::none_of(block_managers_.begin(), block_managers_.end(),
                     [&](const auto& b) { return b.first == t.executor; }))
      throw FieldError(fmt::format("a task ran on executor '{}', which no earlier ExecutorAdded or "
                                   "BlockManagerAdded event names",
                                   t.executor));
    log_.tasks.push_back(std::move(t));
  }

  SparkEventLog& log_;
  bool started_ = false;
  std::string file_;
  int line_ = 0;
  std::vector<std::pair<std::pair<std::string, int>, int>> stage_lines_; // (file, line) of each stage's completion
  std::vector<std::pair<std::string, std::string>> block_managers_;
};

/** The files of a rolling event-log directory (events_<N>_<app>...), in index order; a file is itself. */
std::vector<std::string> log_files(const std::string& path)
{
  if (!fs::is_directory(path))
    return {path};
  std::vector<std::pair<long, std::string>> parts;
  for (const auto& entry : fs::directory_iterator(path)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("events_", 0) != 0)
      continue;
    char* end = nullptr;
    const long index = std::strtol(name.c_str() + 7, &end, 10);
    if (end == name.c_str() + 7 || *end != '_')
      throw InputError(entry.path().string(), 0, 0, "rolling event-log file without an index (events_<N>_<app>)");
    parts.emplace_back(index, entry.path().string());
  }
  if (parts.empty())
    throw InputError(path, 0, 0, "a directory without events_<N>_* files is not a rolling Spark event log");
  std::sort(parts.begin(), parts.end());
  for (std::size_t i = 1; i < parts.size(); ++i)
    if (parts[i].first == parts[i - 1].first) // both read, their events would count twice
      throw InputError(parts[i].second, 0, 0,
                       fmt::format("a second rolling event-log file with index {} (beside {})", parts[i].first,
                                   parts[i - 1].second));
  std::vector<std::string> out;
  for (auto& [i, p] : parts)
    out.push_back(std::move(p));
  return out;
}

void read_lines(const std::string& file, LogBuilder& builder, SparkEventLog& log)
{
  std::istringstream in(read_maybe_gzip(file, "Spark event log", kMaxLogBytes));
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    ++log.lines;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    json e;
    try {
      e = json::parse(line);
    } catch (const json::parse_error& err) {
      const int col = static_cast<int>(std::min<std::size_t>(err.byte, line.size() + 1));
      throw InputError(file, n, std::max(col, 1), "not a JSON event (truncated or corrupt line)");
    } catch (const json::exception& err) { // a number past double's range
      throw InputError(file, n, 1, std::string("not a usable JSON event: ") + err.what());
    }
    try {
      builder.at(file, n);
      if (!e.is_object() || !e.contains("Event") || !e["Event"].is_string())
        throw FieldError("an event needs a string field 'Event'");
      builder.event(e["Event"].get<std::string>(), e);
    } catch (const FieldError& err) {
      throw InputError(file, n, 1, err.what());
    }
  }
}

/** Spark 1.2 dates neither a job's submission nor its end: they are its first stage's submission and its last
 *  stage's completion. */
void date_jobs_from_stages(SparkEventLog& log)
{
  for (auto& j : log.jobs) {
    double first = -1, last = -1;
    for (const auto& s : log.stages)
      if (std::find(j.stages.begin(), j.stages.end(), s.id) != j.stages.end()) {
        if (s.submit_s >= 0 && (first < 0 || s.submit_s < first))
          first = s.submit_s;
        last = std::max(last, s.complete_s);
      }
    if (j.submit_s < 0)
      j.submit_s = first;
    if (j.ended && j.end_s < 0)
      j.end_s = last >= 0 ? last : j.submit_s;
  }
}

} // namespace

SparkEventLog read_spark_event_log(const std::string& path)
{
  SparkEventLog log;
  log.path = path;
  LogBuilder builder(log);
  const auto files = log_files(path);
  for (const auto& f : files)
    read_lines(f, builder, log);
  if (!builder.started())
    throw InputError(files.front(), 1, 1, "no SparkListenerApplicationStart event: not a Spark event log");
  if (log.tasks.empty())
    throw InputError(files.front(), 1, 1, "the log records no task (SparkListenerTaskEnd)");
  builder.check_parents();
  builder.add_local_executors();
  date_jobs_from_stages(log);
  return log;
}

std::string describe(const SparkEventLog& log)
{
  int failed = 0, killed = 0, speculative = 0, memory_reads = 0;
  double input = 0, shuffle_read = 0, shuffle_write = 0, busy = 0;
  for (const auto& t : log.tasks) {
    failed += t.failed && !t.killed;
    killed += t.killed;
    speculative += t.speculative;
    memory_reads += t.read_method == "Memory";
    input += t.input_bytes;
    shuffle_read += t.shuffle_remote_bytes + t.shuffle_local_bytes;
    shuffle_write += t.shuffle_write_bytes;
    busy += t.finish_s - t.launch_s;
  }
  std::set<int> cached;
  for (const auto& s : log.stages)
    for (const auto& r : s.rdds)
      if (r.use_memory || r.use_disk)
        cached.insert(r.id);
  int removed = 0;
  for (const auto& e : log.executors)
    removed += e.removed_s >= 0;
  double last = 0; // without an end event (an application still running when its log was copied): its last task
  for (const auto& t : log.tasks)
    last = std::max(last, t.finish_s);
  const std::string span = log.end_s >= 0 ? fmt::format("{:.1f} s", log.end_s)
                                          : fmt::format("no end event (still running when the log was copied; its "
                                                        "last task ended at {:.1f} s)",
                                                        last);
  std::string out = fmt::format("Spark event log {}\n  application {} ({}), Spark {}, {}\n", log.path, log.app_name,
                                log.app_id, log.spark_version.empty() ? "?" : log.spark_version, span);
  const auto failed_jobs = std::count_if(log.jobs.begin(), log.jobs.end(), [](const auto& j) { return j.failed; });
  out += fmt::format("  {} jobs ({} failed), {} stage attempts, {} tasks ({} failed, {} killed, {} speculative)\n",
                     log.jobs.size(), failed_jobs, log.stages.size(), log.tasks.size(), failed, killed, speculative);
  out +=
      fmt::format("  executors: {} added, {} removed;  task time {:.1f} core-s\n", log.executors.size(), removed, busy);
  out += fmt::format("  bytes: input {:.0f}, shuffle read {:.0f}, shuffle write {:.0f}\n", input, shuffle_read,
                     shuffle_write);
  out += fmt::format("  cache: {} persisted RDDs, {} task reads from memory\n", cached.size(), memory_reads);
  out += fmt::format("  {} lines; {} events of unused types skipped", log.lines, log.unknown_events);
  int shown = 0;
  for (const auto& [type, count] : log.unknown_by_type)
    if (shown++ < 4)
      out += fmt::format("{} {} x{}", shown == 1 ? ":" : ",", type, count);
  return out + "\n";
}

} // namespace cs

namespace cs {
namespace {

// A Spark event log is JSON lines of SparkListener events; a rolling log is a folder of events_<N>_* files.
bool looks_like_spark(const TraceSample& s)
{
  if (s.directory) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(s.path, ec))
      if (entry.path().filename().string().rfind("events_", 0) == 0)
        return true;
    return false;
  }
  return s.head.find("\"Event\":\"SparkListener") != std::string::npos;
}

} // namespace

CS_REGISTER_TRACE_FORMAT(spark, TraceFormat{"spark",
                                            "Spark event log (JSON lines; a file, .gz, or a rolling events_N_* "
                                            "directory)",
                                            "spark",
                                            5,
                                            looks_like_spark,
                                            [](const std::string& p) { return describe(read_spark_event_log(p)); },
                                            {}});
} // namespace cs
