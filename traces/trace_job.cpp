#include "traces/trace_job.hpp"

#include "base/input_error.hpp"

#include "base/input_file.hpp"

#include <algorithm>
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
