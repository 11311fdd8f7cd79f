// SWIM workload TSV (SWIMProjectUCB/SWIM workloadSuite): job_id, submit_s, gap_s, map_input, shuffle, reduce_output
// [, input_path, output_path]. Read line by line; a row that does not parse is skipped and counted.
#include "base/input_file.hpp"
#include "traces/trace_format.hpp"
#include "traces/trace_job.hpp"

#include "base/input_error.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace cs {

namespace {

constexpr std::size_t kMaxSwimLine = std::size_t{1} << 20;

std::vector<std::string> split_tabs(const std::string& line)
{
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos)
      break;
    start = tab + 1;
  }
  return out;
}

bool parse_number(const std::string& text, double& out)
{
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last && std::isfinite(out); // from_chars reads "nan" and "inf"
}

} // namespace

TraceSummary read_swim(const std::string& path, const TraceJobSink& sink)
{
  std::ifstream in = open_input_file(path, "SWIM trace");
  TraceSummary summary;
  summary.file = path;
  summary.format = "swim";
  std::string line;
  int number = 0;
  bool too_long = false;
  while (read_bounded_line(in, line, kMaxSwimLine, too_long)) {
    ++number;
    if (too_long) { // a SWIM row is under a hundred bytes
      summary.skip(number, "line longer than 1 MiB");
      continue;
    }
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty() || line[0] == '#')
      continue;
    auto f = split_tabs(line);
    if (f.size() != 6 && f.size() < 7) {
      summary.skip(number, "wrong field count", std::to_string(f.size()) + " fields, expected 6 or 8");
      continue;
    }
    double values[5];
    bool ok = true;
    for (int i = 0; i < 5 && ok; ++i)
      ok = parse_number(f[1 + i], values[i]);
    if (!ok) {
      summary.skip(number, "non-numeric field");
      continue;
    }
    if (values[0] < 0 || values[2] < 0 || values[3] < 0 || values[4] < 0) {
      summary.skip(number, "negative size or time");
      continue;
    }
    // A job that reads nothing but shuffles or writes (SWIM's data generators) is a job: one map of no input. Only
    // a row with no bytes at all is not.
    if (values[2] <= 0 && values[3] <= 0 && values[4] <= 0) {
      summary.skip(number, "empty job (no input, shuffle or output bytes)");
      continue;
    }
    TraceJob job;
    job.id = f[0];
    job.name = f[0];
    job.submit_s = values[0];
    job.input_bytes = values[2];
    job.shuffle_bytes = values[3];
    job.output_bytes = values[4];
    if (f.size() >= 7)
      job.input_path = f[6];
    if (std::string why = trace_job_out_of_bounds(job); !why.empty()) {
      summary.skip(number, why);
      continue;
    }
    job.line = number;
    ++summary.jobs_read;
    sink(std::move(job));
  }
  return summary;
}

} // namespace cs

namespace cs {
namespace {
// SWIM rows are tab-separated: job, submit time, gap, input, shuffle and output bytes (six fields or more).
bool looks_like_swim(const TraceSample& s)
{
  const std::string line = s.head.substr(0, s.head.find('\n'));
  return !s.directory && std::count(line.begin(), line.end(), '\t') >= 5;
}
} // namespace

CS_REGISTER_TRACE_FORMAT(swim, TraceFormat{"swim",
                                           "SWIM workload TSV (Facebook 2009/2010 samples): job, submit, gap, input, "
                                           "shuffle, output bytes",
                                           "mapreduce", 70, looks_like_swim,
                                           [](const std::string& p) { return mapreduce_trace_summary(p, read_swim); },
                                           read_swim});
} // namespace cs
