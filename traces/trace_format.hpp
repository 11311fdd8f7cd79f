// The trace formats this build reads, one registry: each format's name, what it is, the workload kinds it feeds, how
// a file is told to be one, and what `clustersim trace` says of a file. A reader registers its format in its own
// file; `list traces`, `trace FILE` and every `format:` key read this registry.
#pragma once

#include "traces/trace_job.hpp"

#include <functional>
#include <string>
#include <vector>

namespace cs {

/** What detection looks at: the path, whether it is a folder, and the first bytes of the file (inflated when it is
 *  gzip-compressed; empty for a folder). */
struct TraceSample {
  std::string path;
  bool directory = false;
  std::string head;
};

/** One trace format. */
struct TraceFormat {
  std::string name;
  std::string description; // one line, for `clustersim list traces`
  std::string feeds;       // the workload kind that replays it (e.g. "mapreduce", "gpu-jobs")
  int order = 0;           // detection order: lower first (formats with stricter signatures first)
  std::function<bool(const TraceSample&)> detect;                // whether a file is this format, from its content
  std::function<std::string(const std::string& path)> summarise; // what was read and skipped, one or more lines
  /** MapReduce job traces: streams the jobs of a file (empty for other kinds). */
  std::function<TraceSummary(const std::string& path, const TraceJobSink& sink)> read_jobs;
};

/** Every registered format, by name. */
const std::vector<TraceFormat>& trace_formats_registered();
/** The format called `name`, or nullptr. */
const TraceFormat* find_trace_format(const std::string& name);
/** The names of the formats that feed workload kind `kind` (every format when `kind` is empty), sorted. */
std::vector<std::string> trace_format_names(const std::string& kind = "");

/** The format of `path`, from its content (formats asked in detection order); InputError when none claims it,
 *  naming every format. */
std::string detect_any_trace_format(const std::string& path);

/** Records `format`; called by CS_REGISTER_TRACE_FORMAT. */
bool register_trace_format(TraceFormat format);

/** Registers a trace format at static-initialisation time (`id` names the registration, unique per file). */
#define CS_REGISTER_TRACE_FORMAT(id, ...)                                                                              \
  static const bool cs_registered_trace_##id = ::cs::register_trace_format(__VA_ARGS__)

} // namespace cs
