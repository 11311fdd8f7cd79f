#include "traces/gpu_job_trace.hpp"
#include "base/units.hpp"
#include "traces/trace_format.hpp"

#include "base/input_error.hpp"
#include "traces/compressed_input.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <sstream>

namespace cs {
namespace {

// One CSV row split at commas (these traces quote nothing), with each field's 1-based column.
struct Row {
  std::vector<std::string> fields;
  std::vector<int> columns;
};

Row split(const std::string& line)
{
  Row r;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    r.fields.push_back(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    r.columns.push_back(static_cast<int>(start) + 1);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (!r.fields.empty() && !r.fields.back().empty() && r.fields.back().back() == '\r')
    r.fields.back().pop_back();
  return r;
}

struct Reader {
  std::string path;
  int line = 0;
  Row row;
  std::map<std::string, std::size_t> column; // header name -> field index (rows are read by name, not position)

  std::size_t at(const char* name) const { return column.at(name); }

  [[noreturn]] void fail(std::size_t field, const std::string& message) const
  {
    throw InputError(path, line, field < row.columns.size() ? row.columns[field] : 1, message);
  }
  double number(std::size_t field, const char* what, double lo, double hi) const
  {
    if (field >= row.fields.size())
      missing(what);
    const std::string& text = row.fields[field];
    // Decimal only: stod would also take hexadecimal ("0x10") and so read 16.
    if (text.find_first_of("xXpP") == std::string::npos)
      try {
        std::size_t used = 0;
        const double v = std::stod(text, &used);
        if (used == text.size() && std::isfinite(v) && v >= lo && v <= hi)
          return v;
      } catch (const std::exception&) {
      }
    fail(field, fmt::format("'{}' is not a valid {} (a number in [{}, {}])", text, what, lo, hi));
  }
  // A count (GPUs, thousandths of a GPU): a fraction is refused, not truncated.
  int whole(std::size_t field, const char* what, double lo, double hi) const
  {
    const double v = number(field, what, lo, hi);
    if (v != std::floor(v))
      fail(field, fmt::format("'{}' is not a whole number of {}", row.fields[field], what));
    return static_cast<int>(v);
  }
  // A row too short: the column just past its end.
  [[noreturn]] void missing(const char* what) const
  {
    const int end = row.columns.back() + static_cast<int>(row.fields.back().size());
    throw InputError(path, line, end, fmt::format("missing field '{}'", what));
  }
  const std::string& text(std::size_t field, const char* what) const
  {
    if (field >= row.fields.size())
      missing(what);
    return row.fields[field];
  }
};

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
long long days_from_civil(long long y, unsigned m, unsigned d)
{
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// "YYYY-MM-DD hh:mm:ss" (UTC) as seconds since 1970.
double philly_time(const Reader& r, std::size_t field)
{
  const std::string& t = r.text(field, "timestamp");
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char tail = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2d %2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &tail) != 6 || mo < 1 || mo > 12 ||
      d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 || y < 1970 || y > 2200)
    r.fail(field, "'" + t + "' is not a timestamp 'YYYY-MM-DD hh:mm:ss'");
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  const int month_days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d > month_days[mo - 1])
    r.fail(field, "'" + t + "' is not a date (the month has " + std::to_string(month_days[mo - 1]) + " days)");
  return double(days_from_civil(y, unsigned(mo), unsigned(d))) * 86400.0 + h * 3600.0 + mi * 60.0 + s;
}

void skip(GpuTraceSummary& s, const std::string& reason)
{
  ++s.skipped;
  ++s.skip_reasons[reason];
}

// Each format: its header's first field, and how a row becomes a job (false: skipped, counted in summary).
using RowReader = bool (*)(const Reader&, GpuTraceJob&, GpuTraceSummary&);

bool philly_row(const Reader& r, GpuTraceJob& j, GpuTraceSummary&)
{
  j.submit_s = philly_time(r, r.at("timestamp"));
  j.duration_s = r.number(r.at("duration"), "duration", 0, 1e9);
  j.gpus = r.whole(r.at("num_gpus"), "num_gpus", 1, 1 << 20);
  j.group = r.text(r.at("cluster"), "cluster");
  j.id = fmt::format("philly-{}", r.line - 1);
  return true;
}

bool openb_row(const Reader& r, GpuTraceJob& j, GpuTraceSummary& s)
{
  j.id = r.text(r.at("name"), "name");
  j.gpus = r.whole(r.at("num_gpu"), "num_gpu", 0, 1 << 20);
  j.gpu_milli = r.whole(r.at("gpu_milli"), "gpu_milli", 0, 1000);
  j.group = r.text(r.at("qos"), "qos");
  const std::string& phase = r.text(r.at("pod_phase"), "pod_phase");
  if (phase == "Pending") // no scheduled or deletion time to read
    return skip(s, "never scheduled (Pending)"), false;
  const double created = r.number(r.at("creation_time"), "creation_time", 0, 1e10);
  const double deleted = r.number(r.at("deletion_time"), "deletion_time", 0, 1e10);
  const double scheduled = r.number(r.at("scheduled_time"), "scheduled_time", 0, 1e10);
  if (j.gpus == 0 || j.gpu_milli == 0)
    return skip(s, "uses no GPU"), false;
  if (j.gpus > 1 && j.gpu_milli != 1000)
    return skip(s, "shares GPUs across a gang"), false;
  if (deleted < scheduled)
    r.fail(r.at("deletion_time"), "deletion_time is before scheduled_time");
  j.submit_s = created;
  j.duration_s = deleted - scheduled;
  return true;
}

bool tiresias_row(const Reader& r, GpuTraceJob& j, GpuTraceSummary&)
{
  j.id = r.text(r.at("job_id"), "job_id");
  j.gpus = r.whole(r.at("num_gpu"), "num_gpu", 1, 1 << 20);
  j.submit_s = r.number(r.at("submit_time"), "submit_time", 0, 1e10);
  j.group = r.text(r.at("model_name"), "model_name");
  j.duration_s = r.number(r.at("duration"), "duration", 0, 1e9);
  return true;
}

// Each format: the header names it reads rows by (any order; other columns are passed over, and named in the
// summary), the ones only it has (how a header is recognised), and how a row becomes a job (false: skipped).
struct Format {
  const char* name;
  std::vector<std::string> columns;   // read by name
  std::vector<std::string> signature; // all present: the header is this format's
  RowReader read;
};

const std::vector<Format>& job_formats()
{
  static const std::vector<Format> f{
      {"philly", {"timestamp", "duration", "num_gpus", "cluster"}, {"timestamp", "num_gpus"}, philly_row},
      {"openb",
       {"name", "num_gpu", "gpu_milli", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"},
       {"name", "gpu_milli", "pod_phase"},
       openb_row},
      {"tiresias",
       {"job_id", "num_gpu", "submit_time", "model_name", "duration"},
       {"job_id", "submit_time"},
       tiresias_row}};
  return f;
}

// A header's names and their field indices; a name twice is refused (which one would a row be read by?).
std::map<std::string, std::size_t> header_columns(const std::string& path, const std::string& header)
{
  const Row h = split(header);
  std::map<std::string, std::size_t> out;
  for (std::size_t i = 0; i < h.fields.size(); ++i) {
    std::string name = h.fields[i];
    while (!name.empty() && (name.back() == ' ' || name.back() == '\r'))
      name.pop_back();
    while (!name.empty() && name.front() == ' ')
      name.erase(0, 1);
    if (!out.emplace(name, i).second)
      throw InputError(path, 1, h.columns[i], fmt::format("column '{}' appears twice in the header", name));
  }
  return out;
}

bool has_all(const std::map<std::string, std::size_t>& header, const std::vector<std::string>& names)
{
  for (const auto& n : names)
    if (!header.count(n))
      return false;
  return true;
}

} // namespace

namespace {
std::string format_of_header(const std::string& path, const std::string& header)
{
  const auto columns = header_columns(path, header);
  for (const auto& f : job_formats())
    if (has_all(columns, f.signature))
      return f.name;
  std::vector<std::string> expected;
  for (const auto& f : job_formats())
    expected.push_back(fmt::format("{} ({})", f.name, fmt::join(f.columns, ", ")));
  throw InputError(
      path, 1, 1,
      fmt::format("not a GPU job trace: expected a header of {}, columns in any order", fmt::join(expected, " or ")));
}
} // namespace

std::vector<GpuTraceJob> read_gpu_trace(const std::string& format, const std::string& path, GpuTraceSummary& summary)
{
  std::istringstream in(read_maybe_gzip(path, "GPU job trace", kMaxTraceBytes));
  std::string first;
  std::getline(in, first);
  in.seekg(0);
  const std::string name = format == "auto" ? format_of_header(path, first) : format;
  const Format* f = nullptr;
  for (const auto& candidate : job_formats())
    if (name == candidate.name)
      f = &candidate;
  if (!f)
    throw InputError(path, 0, 0, "unknown GPU job trace format '" + name + "' (philly, openb, tiresias)");
  summary = GpuTraceSummary{path, name, 0, 0, {}, {}};
  Reader r{path, 0, {}, {}};
  std::string line;
  std::vector<GpuTraceJob> jobs;
  while (std::getline(in, line)) {
    ++r.line;
    if (r.line == 1) {
      r.column = header_columns(path, line);
      for (const auto& c : f->columns)
        if (!r.column.count(c))
          throw InputError(path, 1, 1,
                           fmt::format("a {} header needs a column '{}' (it reads {} by name, in any order)", name, c,
                                       fmt::join(f->columns, ", ")));
      for (const auto& [c, i] : r.column)
        if (std::find(f->columns.begin(), f->columns.end(), c) == f->columns.end())
          summary.unread_columns.push_back(c);
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    if (jobs.size() >= kMaxGpuTraceJobs) // 1M rows take 0.29 GB to hold
      throw InputError(path, r.line, 1, fmt::format("more than {} jobs", kMaxGpuTraceJobs));
    r.row = split(line);
    GpuTraceJob job;
    job.line = r.line;
    if (f->read(r, job, summary))
      jobs.push_back(std::move(job));
  }
  if (r.line == 0)
    throw InputError(path, 1, 1, "empty file: no header");
  summary.jobs = static_cast<long>(jobs.size());
  return jobs;
}

std::string describe(const GpuTraceSummary& s)
{
  std::string out = fmt::format("{} ({}): {} jobs, {} skipped", s.file, s.format, s.jobs, s.skipped);
  std::string reasons;
  for (const auto& [reason, count] : s.skip_reasons)
    reasons += (reasons.empty() ? "" : ", ") + fmt::format("{}: {}", reason, count);
  return reasons.empty() ? out : out + " (" + reasons + ")";
}

} // namespace cs

namespace cs {
namespace {

std::string gpu_trace_summary(const std::string& format, const std::string& path)
{
  GpuTraceSummary summary;
  const auto jobs = read_gpu_trace(format, path, summary);
  double gpu_seconds = 0, first = 1e300, last = -1e300;
  int widest = 0;
  for (const auto& j : jobs) {
    gpu_seconds += j.duration_s * j.gpus * j.gpu_milli / 1000.0;
    first = std::min(first, j.submit_s);
    last = std::max(last, j.submit_s);
    widest = std::max(widest, j.gpus);
  }
  std::string out = describe(summary) + "\n";
  if (!summary.unread_columns.empty())
    out += fmt::format("  columns not read: {}\n", fmt::join(summary.unread_columns, ", "));
  if (!jobs.empty())
    out += fmt::format("  submissions over {}, {:.0f} GPU-hours, up to {} GPUs per job\n",
                       units::format_time(last - first), gpu_seconds / 3600, widest);
  return out;
}

// A GPU job trace is a CSV whose header starts with its format's columns.
TraceFormat gpu_format(const char* name, const char* description, int order)
{
  const std::string format = name;
  return TraceFormat{format,
                     description,
                     "gpu-jobs",
                     order,
                     [format](const TraceSample& s) {
                       if (s.directory)
                         return false;
                       const std::string header = s.head.substr(0, s.head.find('\n'));
                       std::map<std::string, std::size_t> columns;
                       try {
                         columns = header_columns(s.path, header);
                       } catch (const InputError&) {
                         return false;
                       }
                       for (const auto& f : job_formats())
                         if (f.name == format)
                           return has_all(columns, f.signature);
                       return false;
                     },
                     [format](const std::string& p) { return gpu_trace_summary(format, p); },
                     {}};
}

} // namespace

CS_REGISTER_TRACE_FORMAT(philly, gpu_format("philly",
                                            "Microsoft Philly GPU-cluster jobs (CSV: timestamp, duration, num_gpus, "
                                            "gpu_time, cluster)",
                                            20));
CS_REGISTER_TRACE_FORMAT(openb, gpu_format("openb",
                                           "Alibaba OpenB GPU pods (CSV: name, cpu_milli, memory_mib, num_gpu, "
                                           "gpu_milli, ...)",
                                           21));
CS_REGISTER_TRACE_FORMAT(tiresias, gpu_format("tiresias",
                                              "Tiresias simulator jobs (CSV: job_id, num_gpu, submit_time, "
                                              "iterations, model_name, ...)",
                                              22));
} // namespace cs
