#include "traces/trace_job.hpp"

#include "base/input_error.hpp"

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

std::string describe(const TraceSummary& s)
{
  std::string reasons;
  for (const auto& [why, n] : s.skip_reasons)
    reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : ", ", why, n);
  return fmt::format("{} ({}): {} jobs read, {} skipped{}", s.file, s.format, s.jobs_read, s.skipped,
                     reasons.empty() ? "" : " (" + reasons + ")");
}

} // namespace cs
