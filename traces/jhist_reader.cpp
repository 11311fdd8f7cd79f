// MRv2 job history (.jhist): "Avro-Json", the Avro schema, then one JSON event per line. One file is one job.
#include "base/input_file.hpp"
#include "traces/trace_format.hpp"
#include "traces/trace_job.hpp"

#include "base/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cs {

namespace {

constexpr std::size_t kMaxJhistLine = std::size_t{16} << 20;

using nlohmann::json;

/** The value of counter `name` in a JhCounters record, or -1. */
double counter(const json& counters, const std::string& name)
{
  if (!counters.is_object() || !counters.contains("groups") || !counters["groups"].is_array())
    return -1;
  for (const auto& g : counters["groups"])
    if (g.contains("counts") && g["counts"].is_array())
      for (const auto& c : g["counts"])
        if (c.value("name", std::string()) == name && c.contains("value") && c["value"].is_number())
          return c["value"].get<double>();
  return -1;
}

std::vector<std::string> split_hosts(const std::string& text)
{
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto comma = text.find(',', start);
    std::string host = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!host.empty())
      out.push_back(host);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

struct TaskRecord {
  bool map = true;
  double start_ms = -1, finish_ms = -1;
  double attempt_start_ms = -1; // the latest attempt's launch: a task scheduled early may wait for a container
  std::map<std::string, double> attempt_starts;  // attempt id -> its launch
  std::vector<std::pair<double, double>> failed; // the failed attempts' launch and end, in order
  double failed_end_ms = -1;                     // the last failed attempt's end
  double killed_start_ms = -1, killed_ms = -1;   // an attempt killed when the job failed: its launch and end
  bool gave_up = false;                          // TASK_FAILED with status FAILED: its last attempt failed
  double input = 0, output = 0, shuffle = 0, written = 0;
  std::vector<std::string> hosts;
};

// A value no history file holds: a fractional task count, a negative counter, a negative time.
struct ImpossibleValue : std::runtime_error {
  using std::runtime_error::runtime_error;
};

double whole_count(const json& body, const char* key)
{
  const double v = body.value(key, 0.0);
  if (std::isfinite(v) && v != std::floor(v))
    throw ImpossibleValue(std::string("a fractional ") + key);
  return v;
}

// A byte counter of a finished task: -1 (absent) reads as 0; below that is no count.
double byte_counter(const json& counters, const char* name)
{
  const double v = counter(counters, name);
  if (v < -1)
    throw ImpossibleValue("a negative byte count");
  return std::max(0.0, v);
}

// An attempt that failed (retried, or the task gives up) or was killed (by the job's failure, or a speculative
// race's loser): a failure's run time is kept; a kill's end bounds the task's time from below.
void read_unsuccessful_attempt(const std::string& type, const json& body, TaskRecord& t)
{
  auto start = t.attempt_starts.find(body.value("attemptId", std::string()));
  const double begin = start == t.attempt_starts.end() ? -1 : start->second;
  const double end = body.value("finishTime", -1.0);
  if (begin < 0 || end < 0)
    return; // an attempt never launched, or with no end: nothing ran that a replay could redo
  if (end < begin)
    throw ImpossibleValue("an attempt ending before it starts");
  t.map = body.value("taskType", std::string()) == "MAP";
  if (type.find("FAILED") != std::string::npos) {
    t.failed.emplace_back(begin, end);
    t.failed_end_ms = std::max(t.failed_end_ms, end);
  } else {
    t.killed_start_ms = begin;
    t.killed_ms = end;
  }
}

// A task's failed attempts with their run times and the wait until the next attempt launched (the AM's request,
// the RM's allocation, the container's start), as recorded.
std::vector<TraceJob::FailedAttempt> failed_attempts(const TaskRecord& t)
{
  std::vector<TraceJob::FailedAttempt> out;
  for (const auto& [begin, end] : t.failed) {
    double next = -1;
    for (const auto& [id, start] : t.attempt_starts)
      if (start >= end && (next < 0 || start < next))
        next = start;
    out.push_back({(end - begin) / 1000.0, next >= 0 ? (next - end) / 1000.0 : -1});
  }
  return out;
}

// Applies one history event to the job being read; a field of the wrong JSON type throws json::exception, a task
// count past the bounds std::out_of_range, an impossible value ImpossibleValue.
void read_event(const std::string& type, const json& body, TraceJob& job, std::map<std::string, TaskRecord>& tasks,
                bool& submitted, bool& inited)
{
  if (type == "JOB_SUBMITTED") {
    job.id = body.value("jobid", std::string());
    job.name = body.value("jobName", job.id);
    job.queue = body.value("jobQueueName", std::string());
    job.submit_s = body.value("submitTime", 0.0) / 1000.0;
    submitted = true;
  } else if (type == "JOB_INITED") {
    if (!bounded_task_count(whole_count(body, "totalMaps"), job.maps) ||
        !bounded_task_count(whole_count(body, "totalReduces"), job.reduces))
      throw std::out_of_range("task count beyond bounds");
    inited = true;
  } else if (type == "JOB_FINISHED") {
    job.commit_s = body.value("finishTime", -1.0); // made relative to the last task's end once all are read
  } else if (type == "JOB_FAILED" || type == "JOB_KILLED") {
    job.commit_s = body.value("finishTime", -1.0);
    job.failed = true;
  } else if (type == "MAP_ATTEMPT_STARTED" || type == "REDUCE_ATTEMPT_STARTED") {
    auto& t = tasks[body.value("taskid", std::string())];
    t.attempt_start_ms = body.value("startTime", -1.0);
    t.attempt_starts[body.value("attemptId", std::string())] = t.attempt_start_ms;
  } else if (type == "MAP_ATTEMPT_FAILED" || type == "REDUCE_ATTEMPT_FAILED" || type == "MAP_ATTEMPT_KILLED" ||
             type == "REDUCE_ATTEMPT_KILLED") {
    read_unsuccessful_attempt(type, body, tasks[body.value("taskid", std::string())]);
  } else if (type == "TASK_FAILED") {
    auto& t = tasks[body.value("taskid", std::string())];
    t.map = body.value("taskType", std::string()) == "MAP";
    t.gave_up = body.value("status", std::string()) == "FAILED";
  } else if (type == "TASK_STARTED") {
    auto& t = tasks[body.value("taskid", std::string())];
    t.map = body.value("taskType", std::string()) == "MAP";
    t.start_ms = body.value("startTime", -1.0);
    t.hosts = split_hosts(body.value("splitLocations", std::string()));
  } else if (type == "TASK_FINISHED" && body.value("status", std::string()) == "SUCCEEDED") {
    auto& t = tasks[body.value("taskid", std::string())];
    t.map = body.value("taskType", std::string()) == "MAP";
    t.finish_ms = body.value("finishTime", -1.0);
    const json& c = body.contains("counters") ? body["counters"] : json();
    t.input = byte_counter(c, "HDFS_BYTES_READ");
    t.output = byte_counter(c, "MAP_OUTPUT_BYTES");
    t.shuffle = byte_counter(c, "REDUCE_SHUFFLE_BYTES");
    t.written = byte_counter(c, "HDFS_BYTES_WRITTEN");
  }
}

} // namespace

TraceSummary read_jhist(const std::string& path, const TraceJobSink& sink)
{
  std::ifstream in = open_input_file(path, "job history file");
  TraceSummary summary;
  summary.file = path;
  summary.format = "jhist";
  std::string line;
  if (!std::getline(in, line) || line.rfind("Avro-Json", 0) != 0)
    throw InputError(path, 1, 1, "not an MRv2 job history file (first line must be 'Avro-Json')");
  TraceJob job;
  job.line = 1;
  bool submitted = false, inited = false;
  std::map<std::string, TaskRecord> tasks; // by task id: sorted, so map order is the task numbering
  int number = 1;
  bool too_long = false;
  while (read_bounded_line(in, line, kMaxJhistLine, too_long)) {
    ++number;
    if (too_long) { // an event with every counter is tens of KiB
      summary.skip(number, "line longer than 16 MiB");
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    json e = json::parse(line, nullptr, false);
    if (e.is_discarded() || !e.is_object()) {
      summary.skip(number, "malformed JSON event");
      continue;
    }
    if (e.contains("fields") && !e.contains("event"))
      continue; // the Avro schema record
    const std::string type = e.contains("type") && e["type"].is_string() ? e["type"].get<std::string>() : "";
    if (!e.contains("event") || !e["event"].is_object() || e["event"].empty()) {
      summary.skip(number, "event without body");
      continue;
    }
    const json& body = e["event"].begin().value();
    try {
      read_event(type, body, job, tasks, submitted, inited);
    } catch (const json::exception&) {
      summary.skip(number, "field of the wrong type");
    } catch (const std::out_of_range&) {
      summary.skip(number, "task count beyond bounds (1,000,000 per job)");
    } catch (const ImpossibleValue& e) {
      summary.skip(number, e.what());
    }
  }
  if (!submitted || !inited) {
    summary.skip(1, submitted ? "no JOB_INITED event" : "no JOB_SUBMITTED event");
    return summary;
  }
  if (job.maps <= 0) {
    summary.skip(1, "zero maps");
    return summary;
  }
  double map_output = 0, shuffle = 0, first_ms = -1, last_ms = -1;
  int maps_seen = 0, reduces_seen = 0;
  for (const auto& [id, t] : tasks) {
    const double start = t.attempt_start_ms >= 0 ? t.attempt_start_ms : t.start_ms;
    if (start >= 0 && t.finish_ms >= 0 && t.finish_ms < start) { // the job's record cannot be replayed as it stands
      summary.skip(1, "a task finishes before it starts");
      return summary;
    }
    const double first_start = t.attempt_starts.empty() ? start : std::min(start, t.attempt_starts.begin()->second);
    if (first_start >= 0 && (first_ms < 0 || first_start < first_ms))
      first_ms = first_start;
    last_ms = std::max({last_ms, t.finish_ms, t.gave_up ? t.failed_end_ms : -1.0});
    double seconds = start >= 0 && t.finish_ms >= start ? (t.finish_ms - start) / 1000.0 : -1;
    if (seconds < 0 && t.killed_ms >= 0) // killed by the job's failure: it ran at least this long
      seconds = (t.killed_ms - t.killed_start_ms) / 1000.0;
    if (t.map) {
      ++maps_seen;
      job.map_input_bytes.push_back(t.input);
      job.input_bytes += t.input;
      job.map_hosts.push_back(t.hosts);
      job.map_seconds.push_back(seconds);
      job.map_failed_attempts.push_back(failed_attempts(t));
      job.map_gave_up.push_back(t.gave_up && !t.failed.empty());
      map_output += t.output;
    } else {
      ++reduces_seen;
      shuffle += t.shuffle;
      job.output_bytes += t.written;
      job.reduce_seconds.push_back(seconds);
      job.reduce_failed_attempts.push_back(failed_attempts(t));
      job.reduce_gave_up.push_back(t.gave_up && !t.failed.empty());
    }
  }
  if (maps_seen != job.maps) {
    job.map_input_bytes.clear();
    job.map_hosts.clear();
    job.map_seconds.clear();
    job.map_failed_attempts.clear();
    job.map_gave_up.clear();
  }
  if (reduces_seen != job.reduces) {
    job.reduce_seconds.clear();
    job.reduce_failed_attempts.clear();
    job.reduce_gave_up.clear();
  }
  job.shuffle_bytes = job.reduces > 0 ? (shuffle > 0 ? shuffle : map_output) : 0;
  // Recorded overheads: submission to the first task's start, the last task's end to the job's end.
  const double finish_ms = job.commit_s;
  job.startup_s = first_ms >= job.submit_s * 1000.0 ? (first_ms - job.submit_s * 1000.0) / 1000.0 : -1;
  job.commit_s = last_ms >= 0 && finish_ms >= last_ms ? (finish_ms - last_ms) / 1000.0 : -1;
  if (std::string why = trace_job_out_of_bounds(job); !why.empty()) {
    summary.skip(1, why);
    return summary;
  }
  ++summary.jobs_read;
  sink(std::move(job));
  return summary;
}

} // namespace cs

namespace cs {
CS_REGISTER_TRACE_FORMAT(jhist,
                         TraceFormat{"jhist", "MRv2 job history file (Avro-JSON events), one job per file", "mapreduce",
                                     60, [](const TraceSample& s) { return s.head.compare(0, 9, "Avro-Json") == 0; },
                                     [](const std::string& p) { return mapreduce_trace_summary(p, read_jhist); },
                                     read_jhist});
} // namespace cs
