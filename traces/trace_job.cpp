#include "traces/trace_job.hpp"

#include "base/input_error.hpp"

#include "base/input_file.hpp"
#include "base/units.hpp"
#include "traces/trace_format.hpp"

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

TraceSummary read_trace(const std::string& format, const std::string& path, const TraceJobSink& sink)
{
  const TraceFormat* f = find_trace_format(format);
  if (!f || !f->read_jobs) {
    std::string names;
    for (const auto& n : trace_format_names("mapreduce"))
      names += (names.empty() ? "" : ", ") + n;
    throw InputError(path, 0, 0, "unknown trace format '" + format + "' (expected one of " + names + ")");
  }
  return f->read_jobs(path, sink);
}

std::string mapreduce_trace_summary(const std::string& path,
                                    const std::function<TraceSummary(const std::string&, const TraceJobSink&)>& read)
{
  long maps = 0, failed_jobs = 0, failed_attempts = 0;
  double input = 0, shuffle = 0;
  const auto summary = read(path, [&](TraceJob&& j) {
    maps += j.maps > 0 ? j.maps : static_cast<long>(j.map_input_bytes.size());
    input += j.input_bytes;
    shuffle += j.shuffle_bytes;
    failed_jobs += j.failed;
    for (const auto* tasks : {&j.map_failed_attempts, &j.reduce_failed_attempts})
      for (const auto& attempts : *tasks)
        failed_attempts += static_cast<long>(attempts.size());
  });
  std::string out = describe(summary) + "\n";
  out += fmt::format("  input {}  shuffle {}\n", units::format_bytes(input), units::format_bytes(shuffle));
  if (failed_jobs > 0 || failed_attempts > 0)
    out += fmt::format("  {} job(s) ended failed or killed; {} failed task attempts\n", failed_jobs, failed_attempts);
  for (const auto& p : summary.problems)
    out += "  " + p + "\n";
  return out;
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
  for (const auto* tasks : {&job.map_failed_attempts, &job.reduce_failed_attempts})
    for (const auto& attempts : *tasks)
      for (const auto& a : attempts)
        if (bad_time(a.run_s) || bad_time(a.relaunch_s))
          return "task time beyond bounds";
  if (bad_time(job.startup_s) || bad_time(job.commit_s))
    return "job start-up or commit time beyond bounds";
  return "";
}

bool bounded_task_count(double value, int& out)
{
  if (!std::isfinite(value) || value < 0 || value > kMaxTraceTasks || value != std::floor(value))
    return false;
  out = static_cast<int>(value);
  return true;
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
