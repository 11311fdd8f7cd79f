#include "traces/trace_format.hpp"

#include "base/input_error.hpp"
#include "base/input_file.hpp"
#include "traces/compressed_input.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

namespace cs {

namespace {

std::map<std::string, TraceFormat>& formats()
{
  static std::map<std::string, TraceFormat> by_name;
  return by_name;
}

// PyTorch's ExecutionTraceObserver writes a JSON object whose schema names Chakra ("1.1.1-chakra.0.0.4") and whose
// nodes carry control dependencies: no reader takes it, but it is often mistaken for one that does.
bool is_pytorch_execution_trace(const std::string& head)
{
  const auto schema = head.find("\"schema\"");
  if (schema == std::string::npos || schema > 200)
    return false;
  const auto end = head.find('\n', schema);
  const std::string line = head.substr(schema, end == std::string::npos ? std::string::npos : end - schema);
  return line.find("chakra") != std::string::npos && head.find("\"nodes\"") != std::string::npos &&
         head.find("\"ctrl_deps\"") != std::string::npos;
}

} // namespace

bool register_trace_format(TraceFormat format)
{
  const std::string name = format.name;
  formats()[name] = std::move(format);
  return true;
}

const std::vector<TraceFormat>& trace_formats_registered()
{
  static const std::vector<TraceFormat> all = [] {
    std::vector<TraceFormat> out;
    for (const auto& [name, f] : formats())
      out.push_back(f);
    return out;
  }();
  return all;
}

const TraceFormat* find_trace_format(const std::string& name)
{
  for (const auto& f : trace_formats_registered())
    if (f.name == name)
      return &f;
  return nullptr;
}

std::vector<std::string> trace_format_names(const std::string& kind)
{
  std::vector<std::string> out;
  for (const auto& f : trace_formats_registered())
    if (kind.empty() || f.feeds == kind)
      out.push_back(f.name);
  return out;
}

std::string detect_any_trace_format(const std::string& path)
{
  TraceSample sample;
  sample.path = path;
  sample.directory = std::filesystem::is_directory(path);
  if (!sample.directory)
    sample.head = head_maybe_gzip(path, "trace", 1 << 20);
  std::vector<const TraceFormat*> by_order;
  for (const auto& f : trace_formats_registered())
    by_order.push_back(&f);
  std::stable_sort(by_order.begin(), by_order.end(),
                   [](const TraceFormat* a, const TraceFormat* b) { return a->order < b->order; });
  for (const TraceFormat* f : by_order)
    if (f->detect && f->detect(sample))
      return f->name;
  if (sample.directory)
    throw InputError(path, 0, 0,
                     "it is a folder, and no reader takes it (a rolling Spark event log is a folder of "
                     "events_<N>_* files)");
  if (is_pytorch_execution_trace(sample.head))
    throw InputError(path, 1, 1,
                     "this is a PyTorch execution trace (ExecutionTraceObserver's JSON), not a Chakra ET: convert it "
                     "with Chakra's chakra_converter (PyTorch to Chakra), then read that with --format chakra; for "
                     "kernel times, record a profiler (Kineto) trace of the same step instead");
  if (sample.head.empty()) // a compressed file that yields nothing may be corrupt: the full read says so
    read_maybe_gzip(path, "trace", std::size_t{1} << 30);
  std::string names;
  for (const auto& n : trace_format_names())
    names += (names.empty() ? "" : "|") + n;
  throw InputError(path, 1, 1,
                   "cannot tell the trace format (no reader recognises its content); name it with --format " + names);
}

} // namespace cs
