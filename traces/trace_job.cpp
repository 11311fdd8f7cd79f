#include "traces/trace_job.hpp"

#include "base/input_error.hpp"

#include "base/input_file.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace cs {

void TraceSummary::skip(int line, const std::string& reason, const std::string& detail)
{
  ++skipped;
  ++skip_reasons[reason];
  if (problems.size() < kMaxProblems)
    problems.push_back(fmt::format("{}:{}: {}{}", file, line, reason, detail.empty() ? "" : " (" + detail + ")"));
}

const std::vector<std::string>& trace_formats()
{
  static const std::vector<std::string> formats{"swim", "rumen", "jhist"};
  return formats;
}

TraceSummary read_trace(const std::string& format, const std::string& path, const TraceJobSink& sink)
{
  if (format == "swim")
    return read_swim(path, sink);
  if (format == "rumen")
    return read_rumen(path, sink);
  if (format == "jhist")
    return read_jhist(path, sink);
  throw InputError(path, 0, 0, "unknown trace format '" + format + "' (expected swim, rumen or jhist)");
}

std::string trace_job_out_of_bounds(const TraceJob& job)
{
  auto bad_size = [](double v) { return !std::isfinite(v) || v > kMaxTraceJobBytes; };
  auto bad_time = [](double v) { return !std::isfinite(v) || std::fabs(v) > kMaxTraceSeconds; };
  if (bad_time(job.submit_s))
    return "submit time beyond bounds";
  if (bad_size(job.input_bytes) || bad_size(job.shuffle_bytes) || bad_size(job.output_bytes))
    return "size beyond bounds (1 PiB per job)";
  if (job.maps > kMaxTraceTasks || job.reduces > kMaxTraceTasks)
    return "task count beyond bounds (1,000,000 per job)";
  for (double v : job.map_input_bytes)
    if (bad_size(v))
      return "size beyond bounds (1 PiB per job)";
  for (const auto* times : {&job.map_seconds, &job.reduce_seconds})
    for (double v : *times)
      if (bad_time(v))
        return "task time beyond bounds";
  if (bad_time(job.startup_s) || bad_time(job.commit_s))
    return "job start-up or commit time beyond bounds";
  return "";
}

bool bounded_task_count(double value, int& out)
{
  if (!std::isfinite(value) || value < 0 || value > kMaxTraceTasks)
    return false;
  out = static_cast<int>(value);
  return true;
}

std::string detect_trace_format(const std::string& path)
{
  std::ifstream in = open_input_file(path, "trace");
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head[first] == '{')
    return "rumen";
  if (head.compare(0, 9, "Avro-Json") == 0)
    return "jhist";
  const std::string line = head.substr(0, head.find('\n'));
  if (std::count(line.begin(), line.end(), '\t') >= 5)
    return "swim";
  throw InputError(path, 1, 1,
                   "cannot tell the trace format (not a rumen JSON stream, a jhist Avro-Json file or SWIM "
                   "tab-separated rows); name it with --format swim|rumen|jhist");
}

std::string describe(const TraceSummary& s)
{
  std::string reasons;
  for (const auto& [why, n] : s.skip_reasons)
    reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : ", ", why, n);
  return fmt::format("{} ({}): {} jobs read, {} skipped{}", s.file, s.format, s.jobs_read, s.skipped,
                     reasons.empty() ? "" : " (" + reasons + ")");
}

} // namespace cs
