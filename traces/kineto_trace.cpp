#include "traces/kineto_trace.hpp"
#include "base/units.hpp"
#include "traces/trace_format.hpp"

#include "base/input_error.hpp"
#include "base/json_document.hpp"
#include "traces/compressed_input.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace cs {
namespace {

[[noreturn]] void bad(const std::string& file, const std::string& where, const std::string& message)
{
  throw InputError(file, 1, 1, where + ": " + message);
}

double number(const nlohmann::json& e, const char* key, const std::string& file, const std::string& where)
{
  auto it = e.find(key);
  if (it == e.end() || !it->is_number())
    bad(file, where + "." + key, "expected a number");
  const double v = it->get<double>();
  if (!(v >= 0 && v < 1e18))
    bad(file, where + "." + key, "out of range");
  return v;
}

// A string field, or "" when it is absent or not a string (fuzzing found names given as numbers).
std::string string_field(const nlohmann::json& e, const char* key)
{
  auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
}

long long integer(const nlohmann::json& e, const char* key)
{
  auto it = e.find(key);
  return it != e.end() && it->is_number_integer() ? it->get<long long>() : -1;
}

void read_collective(const nlohmann::json& args, KinetoOp& op, const std::string& file, const std::string& where)
{
  op.collective = string_field(args, "Collective name");
  if (auto it = args.find("In msg nelems"); it != args.end() && it->is_number()) {
    op.elements = std::max(0.0, it->get<double>());
    if (!(op.elements <= 1e12)) // a 1e300-element message once priced a step at 5.6e288 s
      bad(file, where + ".args.In msg nelems",
          fmt::format("{:g} elements: more than any GPU's memory holds (at most 1e12)", op.elements));
  }
  op.dtype = string_field(args, "dtype");
  if (auto it = args.find("Group size"); it != args.end() && it->is_number_integer())
    op.group_size = static_cast<int>(std::clamp<long long>(it->get<long long>(), 0, 1 << 20));
}

// A thread or stream id: a number, or a string ending in one ("stream 7" in PyTorch 1.8-1.10, "25738"); -1 when
// neither.
long long id_field(const nlohmann::json& e, const char* key)
{
  auto it = e.find(key);
  if (it == e.end())
    return -1;
  if (it->is_number_integer())
    return it->get<long long>();
  if (!it->is_string())
    return -1;
  const std::string& s = it->get_ref<const std::string&>();
  const std::size_t digits = s.find_last_not_of("0123456789");
  const std::string tail = digits == std::string::npos ? s : s.substr(digits + 1);
  return tail.empty() || tail.size() > 18 ? -1 : std::stoll(tail);
}

// The profiler's category in today's names: PyTorch 1.8-1.10 wrote Kernel, Memcpy, Memset, Runtime and Operator.
std::string category(const std::string& c)
{
  if (c == "Kernel")
    return "kernel";
  if (c == "Memcpy")
    return "gpu_memcpy";
  if (c == "Memset")
    return "gpu_memset";
  if (c == "Runtime")
    return "cuda_runtime";
  return c;
}

void read_event(const nlohmann::json& e, const std::string& where, KinetoTrace& t)
{
  if (!e.is_object())
    bad(t.file, where, "expected an event object");
  auto cat = e.find("cat");
  auto ph = e.find("ph");
  if (cat == e.end() || !cat->is_string() || ph == e.end() || *ph != "X")
    return; // instants, flows, metadata: not needed for a replay
  const std::string c = category(cat->get<std::string>());
  const std::string name = string_field(e, "name");
  const auto args = e.contains("args") && e["args"].is_object() ? e["args"] : nlohmann::json::object();
  if (c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset") {
    KinetoOp op;
    op.kind = c == "kernel" ? KinetoOp::KERNEL : c == "gpu_memcpy" ? KinetoOp::MEMCPY : KinetoOp::MEMSET;
    op.name = name;
    op.ts = number(e, "ts", t.file, where) * 1e-6;
    op.dur = number(e, "dur", t.file, where) * 1e-6;
    if (op.dur > 86400)
      bad(t.file, where + ".dur", fmt::format("a GPU op of {:g} s: at most a day", op.dur));
    op.device = static_cast<int>(std::max(0LL, integer(e, "pid")));
    op.stream = integer(args, "stream") >= 0 ? integer(args, "stream") : id_field(e, "tid");
    op.correlation = integer(args, "correlation");
    read_collective(args, op, t.file, where);
    t.ops.push_back(std::move(op));
  } else if (c == "cuda_runtime") {
    t.calls.push_back(KinetoCall{name, number(e, "ts", t.file, where) * 1e-6, number(e, "dur", t.file, where) * 1e-6,
                                 id_field(e, "tid"), integer(args, "correlation")});
  } else if (c == "cuda_sync" && name == "Stream Wait Event") {
    t.waits.push_back(KinetoStreamWait{
        integer(args, "correlation"), integer(args, "stream") >= 0 ? integer(args, "stream") : id_field(e, "tid"),
        integer(args, "wait_on_stream"), integer(args, "wait_on_cuda_event_record_corr_id")});
  } else if ((c == "user_annotation" || c == "Operator" || c == "cpu_op") && name.rfind("ProfilerStep#", 0) == 0) {
    t.steps.push_back(KinetoStep{name, number(e, "ts", t.file, where) * 1e-6, number(e, "dur", t.file, where) * 1e-6});
  }
}

} // namespace

KinetoTrace read_kineto(const std::string& path)
{
  KinetoTrace t;
  t.file = path;
  // Events are read as they are parsed and dropped, so memory holds the text and what a replay keeps.
  const nlohmann::json doc = build_json_document(
      read_maybe_gzip(path, "Kineto trace", kMaxTraceBytes), path, "traceEvents",
      [&t](nlohmann::json&& e, std::size_t i) { read_event(e, fmt::format("traceEvents[{}]", i), t); });
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    bad(path, "traceEvents", "not a Kineto trace: expected an object with a traceEvents list");
  if (doc.contains("deviceProperties") && doc["deviceProperties"].is_array() && !doc["deviceProperties"].empty() &&
      doc["deviceProperties"][0].is_object())
    t.device_name = string_field(doc["deviceProperties"][0], "name");
  if (doc.contains("distributedInfo") && doc["distributedInfo"].is_object()) {
    const auto& d = doc["distributedInfo"];
    t.rank = static_cast<int>(std::clamp<long long>(integer(d, "rank"), 0, 1 << 20));
    t.world_size = static_cast<int>(std::clamp<long long>(integer(d, "world_size"), 1, 1 << 20));
  }
  auto by_ts = [](const auto& a, const auto& b) { return a.ts < b.ts; };
  std::stable_sort(t.ops.begin(), t.ops.end(), by_ts);
  std::stable_sort(t.calls.begin(), t.calls.end(), by_ts);
  std::stable_sort(t.steps.begin(), t.steps.end(), by_ts);
  if (t.ops.empty())
    bad(path, "traceEvents", "no GPU kernel, memcpy or memset event: nothing to replay");
  return t;
}

} // namespace cs

namespace cs {
namespace {

std::string kineto_summary(const std::string& path)
{
  const KinetoTrace t = read_kineto(path);
  int nccl = 0;
  double busy = 0;
  for (const auto& op : t.ops) {
    nccl += !op.collective.empty() || op.name.rfind("nccl", 0) == 0;
    busy += op.dur;
  }
  double step = 0;
  for (const auto& s : t.steps)
    step += s.dur / double(t.steps.size());
  return fmt::format("{} (kineto): rank {} of {}, {}; {} GPU operations ({} NCCL, {} busy), {} runtime calls, {} "
                     "profiler steps{}\n",
                     path, t.rank, t.world_size, t.device_name.empty() ? "no device name" : t.device_name, t.ops.size(),
                     nccl, units::format_time(busy), t.calls.size(), t.steps.size(),
                     t.steps.empty() ? "" : " of " + units::format_time(step) + " on average");
}

} // namespace

CS_REGISTER_TRACE_FORMAT(kineto, TraceFormat{"kineto",
                                             "PyTorch profiler trace (Chrome trace JSON, .json or .json.gz)",
                                             "kineto-replay",
                                             30,
                                             [](const TraceSample& s) {
                                               return !s.directory &&
                                                      s.head.find("\"traceEvents\"") != std::string::npos;
                                             },
                                             kineto_summary,
                                             {}});
} // namespace cs
