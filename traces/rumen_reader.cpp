// Hadoop rumen job traces (the SLS and gridmix samples): a stream of pretty-printed JSON objects, one per job.
// The stream is cut into top-level objects by brace depth (strings and escapes respected) so that each job is
// parsed on its own with nlohmann::json and an error points at the job's line.
#include "base/input_file.hpp"
#include "traces/trace_format.hpp"
#include "traces/trace_job.hpp"

#include "base/input_error.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace cs {

namespace {

using nlohmann::json;

double number_or(const json& j, const char* key, double fallback)
{
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

/** The successful attempt of a task, or null. */
const json* successful_attempt(const json& task)
{
  auto it = task.find("attempts");
  if (it == task.end() || !it->is_array())
    return nullptr;
  for (const auto& a : *it)
    if (a.value("result", std::string()) == "SUCCESS")
      return &a;
  return nullptr;
}

/** Fills `job` from one rumen LoggedJob; returns a reason when the record is unusable. */

/** What a job spent besides its tasks, when recorded: submission to its first attempt's start (the AM's start-up and
 *  setup, the first container's launch) and its last task's end to the job's end (output commit, AM shut-down). */
void record_overheads(const json& j, const json& maps, const json& reduces, double submit_ms, TraceJob& job)
{
  double first = -1, last = -1;
  for (const json* tasks : {&maps, &reduces})
    for (const auto& t : *tasks) {
      const json* a = successful_attempt(t);
      if (!a)
        continue;
      if (const double s = number_or(*a, "startTime", -1); s >= 0 && (first < 0 || s < first))
        first = s;
      last = std::max(last, number_or(*a, "finishTime", -1));
    }
  const double finish = number_or(j, "finishTime", -1);
  if (first >= submit_ms && submit_ms >= 0)
    job.startup_s = (first - submit_ms) / 1000.0;
  if (last >= 0 && finish >= last)
    job.commit_s = (finish - last) / 1000.0;
}

std::string convert(const json& j, TraceJob& job)
{
  if (!j.is_object())
    return "not a job object";
  job.id = j.value("jobID", std::string());
  if (job.id.empty())
    return "job without jobID";
  job.name = j.value("jobName", job.id);
  job.queue = j.value("queue", std::string());
  const json empty = json::array();
  const json& maps = j.contains("mapTasks") && j["mapTasks"].is_array() ? j["mapTasks"] : empty;
  const json& reduces = j.contains("reduceTasks") && j["reduceTasks"].is_array() ? j["reduceTasks"] : empty;
  // gridmix's sample has no submitTime: the earliest task start stands in for it.
  double submit_ms = number_or(j, "submitTime", -1);
  if (submit_ms < 0)
    submit_ms = number_or(j, "launchTime", -1);
  if (submit_ms < 0)
    for (const auto& t : maps)
      if (double s = number_or(t, "startTime", -1); s >= 0 && (submit_ms < 0 || s < submit_ms))
        submit_ms = s;
  if (submit_ms < 0)
    return "no submit time";
  job.submit_s = submit_ms / 1000.0;
  double map_output = 0;
  for (const auto& t : maps) {
    double in = number_or(t, "inputBytes", -1);
    const json* a = successful_attempt(t);
    if (in < 0 && a)
      in = number_or(*a, "hdfsBytesRead", 0);
    job.map_input_bytes.push_back(std::max(0.0, in));
    job.input_bytes += std::max(0.0, in);
    std::vector<std::string> hosts;
    if (auto p = t.find("preferredLocations"); p != t.end() && p->is_array())
      for (const auto& loc : *p)
        if (auto layers = loc.find("layers");
            layers != loc.end() && layers->is_array() && !layers->empty() && layers->back().is_string())
          hosts.push_back(layers->back().get<std::string>());
    job.map_hosts.push_back(std::move(hosts));
    double seconds = -1;
    if (a && number_or(*a, "finishTime", -1) >= 0 && number_or(*a, "startTime", -1) >= 0)
      seconds = (number_or(*a, "finishTime", 0) - number_or(*a, "startTime", 0)) / 1000.0;
    job.map_seconds.push_back(seconds);
    if (a)
      map_output += std::max(0.0, number_or(*a, "mapOutputBytes", 0));
  }
  double shuffle = 0;
  for (const auto& t : reduces) {
    const json* a = successful_attempt(t);
    double seconds = -1;
    if (a) {
      shuffle += std::max(0.0, number_or(*a, "reduceShuffleBytes", 0));
      job.output_bytes += std::max(0.0, number_or(*a, "hdfsBytesWritten", 0));
      if (number_or(*a, "finishTime", -1) >= 0 && number_or(*a, "startTime", -1) >= 0)
        seconds = (number_or(*a, "finishTime", 0) - number_or(*a, "startTime", 0)) / 1000.0;
    }
    job.reduce_seconds.push_back(seconds);
  }
  const double total_maps = number_or(j, "totalMaps", static_cast<double>(maps.size()));
  const double total_reduces = number_or(j, "totalReduces", static_cast<double>(reduces.size()));
  if (total_reduces < 0)
    return "negative reduce count";
  if (!bounded_task_count(total_maps, job.maps) || !bounded_task_count(total_reduces, job.reduces))
    return "task count beyond bounds (1,000,000 per job)";
  if (job.maps <= 0)
    return "zero maps";
  if (job.maps != static_cast<int>(maps.size())) { // per-map detail must match the count, else drop the detail
    job.map_input_bytes.clear();
    job.map_hosts.clear();
    job.map_seconds.clear();
  }
  if (job.reduces != static_cast<int>(reduces.size()))
    job.reduce_seconds.clear();
  job.shuffle_bytes = job.reduces > 0 ? (shuffle > 0 ? shuffle : map_output) : 0;
  record_overheads(j, maps, reduces, submit_ms, job);
  return trace_job_out_of_bounds(job);
}

// What makes a record unusable before it is converted (docs/reliability.md: skipped and counted, not taken): a
// string or other non-number where rumen has a number, a negative byte count, a fractional task count, an attempt
// or a job that ends before it starts.
std::string record_problem(const json& j)
{
  if (!j.is_object())
    return "";
  for (const char* key : {"submitTime", "launchTime", "finishTime", "totalMaps", "totalReduces"})
    if (auto it = j.find(key); it != j.end() && !it->is_number() && !it->is_null())
      return std::string("'") + key + "' is not a number";
  for (const char* key : {"totalMaps", "totalReduces"})
    if (const double v = number_or(j, key, 0); v < 0 || v != std::floor(v))
      return std::string("'") + key + "' is not a whole count";
  const double submit = number_or(j, "submitTime", -1), finish = number_or(j, "finishTime", -1);
  if (submit >= 0 && finish >= 0 && finish < submit)
    return "the job finishes before it is submitted";
  for (const char* list : {"mapTasks", "reduceTasks"}) {
    auto tasks = j.find(list);
    if (tasks == j.end() || !tasks->is_array())
      continue;
    for (const auto& t : *tasks) {
      if (!t.is_object())
        continue;
      if (auto in = t.find("inputBytes"); in != t.end() && in->is_number() && in->get<double>() < -1)
        return "a negative byte count";
      auto attempts = t.find("attempts");
      if (attempts == t.end() || !attempts->is_array())
        continue;
      for (const auto& a : *attempts) {
        if (!a.is_object())
          continue;
        for (const char* key :
             {"startTime", "finishTime", "hdfsBytesRead", "hdfsBytesWritten", "mapOutputBytes", "reduceShuffleBytes"})
          if (auto it = a.find(key); it != a.end() && !it->is_number() && !it->is_null())
            return std::string("an attempt's '") + key + "' is not a number";
        for (const char* key : {"hdfsBytesRead", "hdfsBytesWritten", "mapOutputBytes", "reduceShuffleBytes"})
          if (number_or(a, key, 0) < -1) // rumen writes -1 for "not recorded"
            return "a negative byte count";
        const double start = number_or(a, "startTime", -1), end = number_or(a, "finishTime", -1);
        if (start >= 0 && end >= 0 && end < start)
          return "an attempt finishes before it starts";
      }
    }
  }
  return "";
}

// convert(), with a field of the wrong JSON type (a number where a string belongs) a skipped record, as documented.
std::string convert_record(const json& j, TraceJob& job)
{
  try {
    if (std::string why = record_problem(j); !why.empty())
      return why;
    return convert(j, job);
  } catch (const json::exception&) {
    return "field of the wrong type";
  }
}

} // namespace

TraceSummary read_rumen(const std::string& path, const TraceJobSink& sink)
{
  std::ifstream in = open_input_file(path, "rumen trace");
  TraceSummary summary;
  summary.file = path;
  summary.format = "rumen";
  std::string object;
  int depth = 0, line = 1, column = 0, start_line = 0;
  bool in_string = false, escaped = false;
  char c;
  while (in.get(c)) {
    ++column;
    if (depth == 0) {
      if (c == '\n') {
        ++line;
        column = 0;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r')
        continue;
      if (c != '{')
        throw InputError(path, line, column,
                         std::string("expected '{' starting a rumen job object, found '") + c + "'");
      start_line = line;
      object.clear();
    }
    object += c;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{' || c == '[')
      ++depth;
    else if (c == '}' || c == ']') {
      if (--depth == 0) {
        json j = json::parse(object, nullptr, false);
        TraceJob job;
        std::string why = j.is_discarded() ? "malformed JSON" : convert_record(j, job);
        if (!why.empty()) {
          summary.skip(start_line, why);
          continue;
        }
        job.line = start_line;
        ++summary.jobs_read;
        sink(std::move(job));
      }
    }
  }
  if (depth != 0)
    throw InputError(path, start_line, 1, "rumen job object starting here is not closed (truncated file?)");
  return summary;
}

} // namespace cs

namespace cs {
namespace {
// A rumen trace is a stream of JSON objects, each a job with its "jobID".
bool looks_like_rumen(const TraceSample& s)
{
  const auto first = s.head.find_first_not_of(" \t\r\n");
  return !s.directory && first != std::string::npos && s.head[first] == '{' &&
         s.head.find("\"jobID\"") != std::string::npos;
}
} // namespace

CS_REGISTER_TRACE_FORMAT(rumen, TraceFormat{"rumen",
                                            "Hadoop rumen job trace (JSON objects; SLS and gridmix samples), with "
                                            "preferredLocations",
                                            "mapreduce", 50, looks_like_rumen,
                                            [](const std::string& p) { return mapreduce_trace_summary(p, read_rumen); },
                                            read_rumen});
} // namespace cs
