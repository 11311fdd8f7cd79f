#include "traces/chakra_trace.hpp"
#include "base/units.hpp"
#include "traces/trace_format.hpp"

#include "base/input_error.hpp"
#include "base/json_input.hpp"
#include "traces/compressed_input.hpp"

#include "chakra_et.pb.h"

#include <algorithm>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <map>
#include <queue>

namespace cs {
namespace {

constexpr std::size_t kMaxNodes = 5'000'000; // about 170 B each held, and a task each replayed: within 2 GB
constexpr std::uint32_t kMaxMessageBytes = 64u << 20;
constexpr double kMaxMicros = 1e12;      // 11.6 days: past it a duration is corrupt, not slow
constexpr double kMaxStartMicros = 1e18; // start times may count from the Unix epoch (1.7e15 us today)
constexpr double kMaxCommBytes = 1e15;   // a petabyte per collective

bool et_name(const std::string& path) { return path.ends_with(".et") || path.ends_with(".et.gz"); }

[[noreturn]] void bad(const std::string& file, const std::string& message) { throw InputError(file, 1, 1, message); }

// The attributes clustersim uses, from either form.
void take_attribute(const cs::chakra::Attribute& a, ChakraNode& n)
{
  using A = cs::chakra::Attribute;
  auto integer = [&]() -> long long {
    switch (a.value_case()) {
    case A::kInt32Val:
      return a.int32_val();
    case A::kInt64Val:
      return a.int64_val();
    case A::kUint32Val:
      return a.uint32_val();
    case A::kUint64Val:
      return static_cast<long long>(std::min<std::uint64_t>(a.uint64_val(), 1ull << 62));
    case A::kSint32Val:
      return a.sint32_val();
    case A::kSint64Val:
      return a.sint64_val();
    default:
      return -1;
    }
  };
  if (a.name() == "is_cpu_op" && a.value_case() == A::kBoolVal)
    n.cpu = a.bool_val();
  else if (a.name() == "tid")
    n.tid = integer();
  else if (a.name() == "comm_type")
    n.comm_type = static_cast<int>(std::clamp<long long>(integer(), -1, 1 << 20));
  else if (a.name() == "comm_size")
    n.comm_bytes = static_cast<double>(std::max<long long>(0, integer()));
  else if (a.name() == "comm_src")
    n.comm_src = std::clamp<long long>(integer(), -1, 1 << 24);
  else if (a.name() == "comm_dst")
    n.comm_dst = std::clamp<long long>(integer(), -1, 1 << 24);
}

void check_node(const ChakraNode& n, const std::string& file, const std::string& where)
{
  if (!(n.duration >= 0 && n.duration <= kMaxMicros * 1e-6))
    bad(file, where + ": duration out of range");
  if (!(n.start <= kMaxStartMicros * 1e-6))
    bad(file, where + ": start time out of range");
  if (!(n.comm_bytes >= 0 && n.comm_bytes <= kMaxCommBytes))
    bad(file, where + ": comm_size out of range");
}

// Keeps the dependencies on nodes the trace holds; an id given twice is an error.
void resolve(ChakraTrace& t, const std::string& what)
{
  if (t.nodes.empty())
    bad(t.file, what + ": no nodes: nothing to replay");
  std::map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    if (!index.emplace(t.nodes[i].id, i).second)
      bad(t.file, fmt::format("{}: node id {} appears twice", what, t.nodes[i].id));
  for (auto& n : t.nodes) {
    std::sort(n.deps.begin(), n.deps.end());
    n.deps.erase(std::unique(n.deps.begin(), n.deps.end()), n.deps.end());
    const auto kept = std::remove_if(n.deps.begin(), n.deps.end(), [&](auto d) { return !index.count(d); });
    t.dropped_deps += static_cast<int>(n.deps.end() - kept);
    n.deps.erase(kept, n.deps.end());
  }
}

} // namespace

ChakraTrace parse_chakra_et(const std::string& bytes, const std::string& file)
{
  ChakraTrace t;
  t.file = file;
  t.form = "protobuf";
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::size_t at = 0;
  for (std::size_t message = 0; at < bytes.size(); ++message) {
    const std::string where = fmt::format("message {} at byte {}", message, at);
    google::protobuf::io::CodedInputStream in(data + at,
                                              static_cast<int>(std::min<std::size_t>(bytes.size() - at, 1u << 30)));
    std::uint32_t size = 0;
    if (!in.ReadVarint32(&size) || size > kMaxMessageBytes)
      bad(file, where + ": corrupt length prefix (not a Chakra .et stream?)");
    if (size > bytes.size() - at - static_cast<std::size_t>(in.CurrentPosition()))
      bad(file, fmt::format("{}: a message of {} bytes runs past the end of the file (truncated?)", where, size));
    const auto limit = in.PushLimit(static_cast<int>(size));
    if (message == 0) {
      cs::chakra::GlobalMetadata meta;
      if (!meta.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
        bad(file, where + ": corrupt GlobalMetadata");
      t.schema = meta.version();
      for (const auto& a : meta.attr())
        if (a.name() == "schema" && a.value_case() == cs::chakra::Attribute::kStringVal)
          t.schema = a.string_val();
    } else {
      cs::chakra::Node pb;
      if (!pb.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
        bad(file, where + ": corrupt Node message");
      if (t.nodes.size() >= kMaxNodes)
        bad(file, where + fmt::format(": more than {} nodes", kMaxNodes));
      ChakraNode n;
      n.id = pb.id();
      n.name = pb.name();
      n.type = pb.type();
      n.deps.assign(pb.data_deps().begin(), pb.data_deps().end());
      n.duration = static_cast<double>(pb.duration_micros()) * 1e-6;
      if (pb.start_time_micros() > 0)
        n.start = static_cast<double>(pb.start_time_micros()) * 1e-6;
      for (const auto& a : pb.attr())
        take_attribute(a, n);
      check_node(n, file, fmt::format("{} (node {})", where, n.id));
      t.nodes.push_back(std::move(n));
    }
    in.PopLimit(limit);
    at += static_cast<std::size_t>(in.CurrentPosition());
  }
  resolve(t, "Chakra trace");
  return t;
}

namespace {

// A JSON node's field, checked; errors point at the node (its n-th "Id" key) and the field's key after it.
struct JsonNodeReader {
  const std::string& text;
  const std::string& file;
  std::size_t node_at = 0;
  std::size_t index = 0;

  [[noreturn]] void fail(const char* key, const std::string& message) const
  {
    const std::size_t key_at = text.find(std::string("\"") + key + "\"", node_at);
    const auto [line, col] = line_and_column(text, key_at == std::string::npos ? node_at : key_at);
    throw InputError(file, line, col, fmt::format("at workload_graph/{}/{}: {}", index, key, message));
  }

  double number(const nlohmann::json& j, const char* key, double max, double fallback) const
  {
    auto it = j.find(key);
    if (it == j.end())
      return fallback;
    if (!it->is_number())
      fail(key, "expected a number");
    const double v = it->get<double>();
    if (!(v >= 0 && v <= max))
      fail(key, fmt::format("out of range (0 to {:g})", max));
    return v;
  }

  void ids(const nlohmann::json& j, const char* key, std::vector<std::uint64_t>& out) const
  {
    auto it = j.find(key);
    if (it == j.end())
      return;
    if (!it->is_array())
      fail(key, "expected a list of node ids");
    for (const auto& d : *it) {
      if (!d.is_number_integer() || d.get<long long>() < 0)
        fail(key, "expected a list of node ids");
      out.push_back(d.get<std::uint64_t>());
    }
  }
};

} // namespace

ChakraTrace parse_chakra_json(const std::string& text, const std::string& file)
{
  const nlohmann::json doc = parse_json_input(text, file);
  ChakraTrace t;
  t.file = file;
  t.form = "json";
  if (!doc.is_object() || !doc.contains("workload_graph") || !doc["workload_graph"].is_array())
    bad(file, "not a Chakra JSON trace: expected an object with a workload_graph list");
  if (auto it = doc.find("ngpus"); it != doc.end() && it->is_number_integer())
    t.world_size = static_cast<int>(std::clamp<long long>(it->get<long long>(), 0, 1 << 20));
  const auto& graph = doc["workload_graph"];
  if (graph.size() > kMaxNodes)
    bad(file, fmt::format("workload_graph: more than {} nodes", kMaxNodes));
  JsonNodeReader r{text, file, text.find("\"workload_graph\""), 0};
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const auto& j = graph[i];
    r.index = i;
    r.node_at = std::min(text.size(), text.find("\"Id\"", r.node_at + 1));
    if (!j.is_object())
      r.fail("Id", "expected a node object");
    ChakraNode n;
    auto id = j.find("Id");
    if (id == j.end() || !id->is_number_integer() || id->get<long long>() < 0)
      r.fail("Id", "expected a node id (a whole number, at least 0)");
    n.id = id->get<std::uint64_t>();
    if (auto name = j.find("Name"); name != j.end() && name->is_string())
      n.name = name->get<std::string>();
    n.type = static_cast<int>(r.number(j, "NodeType", 1 << 20, ChakraNode::COMPUTE));
    n.duration = r.number(j, "runtime", kMaxMicros, 0) * 1e-6;
    n.comm_bytes = r.number(j, "comm_size", kMaxCommBytes, 0);
    n.comm_type = static_cast<int>(r.number(j, "comm_type", 1 << 20, -1));
    n.comm_src = static_cast<long long>(r.number(j, "comm_src", 1 << 24, -1));
    n.comm_dst = static_cast<long long>(r.number(j, "comm_dst", 1 << 24, -1));
    n.tid = static_cast<long long>(r.number(j, "tid", 1e15, -1));
    if (auto cpu = j.find("is_cpu_op"); cpu != j.end()) {
      if (!cpu->is_boolean())
        r.fail("is_cpu_op", "expected true or false");
      n.cpu = cpu->get<bool>();
    }
    r.ids(j, "data_deps", n.deps);
    t.nodes.push_back(std::move(n));
  }
  resolve(t, "workload_graph");
  return t;
}

bool looks_like_chakra(const std::string& path)
{
  return et_name(path) || head_maybe_gzip(path, "trace", 4096).find("\"workload_graph\"") != std::string::npos;
}

ChakraTrace read_chakra(const std::string& path)
{
  const std::string bytes = read_maybe_gzip(path, "Chakra trace", kMaxTraceBytes);
  // By extension first: an .et stream whose first length prefix is 123 bytes starts with '{'.
  if (et_name(path))
    return parse_chakra_et(bytes, path);
  const std::size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string::npos && bytes[first] == '{' ? parse_chakra_json(bytes, path)
                                                           : parse_chakra_et(bytes, path);
}

std::vector<std::size_t> chakra_order(const ChakraTrace& t)
{
  std::map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    index.emplace(t.nodes[i].id, i);
  std::vector<int> waiting(t.nodes.size(), 0);
  std::vector<std::vector<std::size_t>> dependents(t.nodes.size());
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    for (auto d : t.nodes[i].deps) {
      ++waiting[i];
      dependents[index.at(d)].push_back(i);
    }
  using Ready = std::pair<std::uint64_t, std::size_t>; // (id, index): the lowest id first
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    if (waiting[i] == 0)
      ready.emplace(t.nodes[i].id, i);
  std::vector<std::size_t> order;
  order.reserve(t.nodes.size());
  while (!ready.empty()) {
    const std::size_t i = ready.top().second;
    ready.pop();
    order.push_back(i);
    for (auto j : dependents[i])
      if (--waiting[j] == 0)
        ready.emplace(t.nodes[j].id, j);
  }
  if (order.size() != t.nodes.size()) {
    const auto stuck = std::find_if(waiting.begin(), waiting.end(), [](int w) { return w > 0; }) - waiting.begin();
    bad(t.file, fmt::format("the dependencies form a cycle (node {} is on or after it)", t.nodes[stuck].id));
  }
  return order;
}

} // namespace cs

namespace cs {
namespace {

std::string chakra_summary(const std::string& path)
{
  const ChakraTrace t = read_chakra(path);
  chakra_order(t); // a cycle is an error here too
  int cpu = 0, kernels = 0, collectives = 0, timed = 0;
  double cpu_s = 0, gpu_s = 0, comm_bytes = 0;
  for (const auto& n : t.nodes) {
    cpu += n.cpu;
    kernels += !n.cpu && n.type == ChakraNode::COMPUTE;
    collectives += !n.cpu && n.type == ChakraNode::COLLECTIVE;
    timed += n.duration > 0;
    (n.cpu ? cpu_s : gpu_s) += n.duration;
    comm_bytes += n.cpu ? 0 : n.comm_bytes;
  }
  return fmt::format("{} (chakra {}{}): {} nodes: {} CPU ops ({} measured), {} kernels and {} GPU collectives ({} "
                     "measured, {} of collectives); {} nodes have a duration; {} dependencies on nodes not in the "
                     "trace left out\n",
                     path, t.form, t.schema.empty() ? "" : ", schema " + t.schema, t.nodes.size(), cpu,
                     units::format_time(cpu_s), kernels, collectives, units::format_time(gpu_s),
                     units::format_bytes(comm_bytes), timed, t.dropped_deps);
}

} // namespace

CS_REGISTER_TRACE_FORMAT(chakra,
                         TraceFormat{"chakra",
                                     "Chakra execution trace (.et protobuf or its JSON form, maybe .gz)",
                                     "chakra-replay",
                                     10,
                                     [](const TraceSample& s) { return !s.directory && looks_like_chakra(s.path); },
                                     chakra_summary,
                                     {}});
} // namespace cs
