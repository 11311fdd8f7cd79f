#include "workloads/replay/replay_graph.hpp"

#include "models/collectives/collective_model.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <regex>
#include <stdexcept>

namespace cs {
namespace {

bool is_sync(const std::string& call)
{
  return call == "cudaDeviceSynchronize" || call == "cudaStreamSynchronize" || call == "cudaEventSynchronize" ||
         call == "cudaMemcpy";
}

// NCCL's collective names (as the profiler writes them) in clustersim's vocabulary; "" = not modeled.
std::string collective_kind(const std::string& c)
{
  static const std::map<std::string, std::string> kinds{
      {"allreduce", "all-reduce"},          {"broadcast", "broadcast"},
      {"allgather", "all-gather"},          {"_allgather_base", "all-gather"},
      {"reduce_scatter", "reduce-scatter"}, {"_reduce_scatter_base", "reduce-scatter"},
      {"all_to_all", "all-to-all"}};
  auto it = kinds.find(c);
  return it == kinds.end() ? "" : it->second;
}

double element_bytes(const std::string& dtype)
{
  static const std::map<std::string, double> bytes{{"Float", 4}, {"Half", 2}, {"BFloat16", 2}, {"Double", 8},
                                                   {"Long", 8},  {"Int", 4},  {"Char", 1},     {"Byte", 1},
                                                   {"Bool", 1},  {"Short", 2}};
  auto it = bytes.find(dtype);
  return it == bytes.end() ? 4 : it->second;
}

// What a cudaEventRecord captured: the last task on its stream then (-1: nothing yet).
struct EventMark {
  long long stream = -1;
  int task = -1;
};

// The graph being built: per CPU thread its chain, per GPU stream its last task, and the events recorded and waited.
struct ReplayBuilder {
  ReplayBuilder(const KinetoTrace& trace, const ReplayOptions& options) : t(trace), o(options) {}
  const KinetoTrace& t;
  const ReplayOptions& o;
  ReplayGraph out;
  std::map<long long, int> cpu_stream, gpu_stream;
  std::map<long long, double> cpu_point; // per thread: where its next gap is measured from
  std::map<long long, int> last_on_stream;
  std::map<long long, int> call_task; // correlation -> the call's task
  // Waits as the profiler recorded them on the GPU (cuda_sync): by the wait call's correlation, and the stream each
  // record's event was taken on, by the record call's correlation.
  std::map<long long, const KinetoStreamWait*> exact_wait;
  std::map<long long, long long> exact_record_stream;
  std::map<long long, EventMark> exact_record;        // record correlation -> what it captured
  std::map<long long, std::vector<int>> stream_waits; // per stream: what its next operation waits for
  // Waits inferred from the CPU side: an event is taken on the stream its thread last launched on, and a
  // cudaStreamWaitEvent waits for the thread's latest record; the thread's next launch carries the wait.
  std::map<long long, long long> thread_stream;             // per thread: the stream of its latest launch
  std::map<long long, EventMark> thread_record;             // per thread: its latest record
  std::map<long long, std::vector<EventMark>> thread_waits; // per thread: waits its next launch carries
  std::map<long long, bool> wait_all;                       // per thread: a wait on an event of unknown stream
  double origin = 0;

  int cpu_chain(long long thread)
  {
    auto [it, fresh] = cpu_stream.try_emplace(thread, -1);
    if (fresh)
      it->second = out.graph.add_stream(0, "cpu " + std::to_string(thread));
    return it->second;
  }

  EventMark mark_of(long long stream) const
  {
    auto it = last_on_stream.find(stream);
    return EventMark{stream, it == last_on_stream.end() ? -1 : it->second};
  }

  void record_event(const KinetoCall& c)
  {
    if (auto e = exact_record_stream.find(c.correlation); e != exact_record_stream.end())
      exact_record[c.correlation] = mark_of(e->second);
    auto s = thread_stream.find(c.thread);
    thread_record[c.thread] = s == thread_stream.end() ? EventMark{} : mark_of(s->second);
  }

  void wait_event(const KinetoCall& c)
  {
    if (auto w = exact_wait.find(c.correlation); w != exact_wait.end()) {
      auto r = exact_record.find(w->second->record_correlation);
      if (r != exact_record.end() && r->second.task >= 0)
        stream_waits[w->second->stream].push_back(r->second.task);
      return;
    }
    auto r = thread_record.find(c.thread);
    if (r == thread_record.end() || r->second.stream < 0)
      wait_all[c.thread] = true; // no record on this thread to pair with: wait for every stream
    else if (r->second.task >= 0)
      thread_waits[c.thread].push_back(r->second);
  }

  // A runtime call: its gap after the thread's previous point; a synchronisation also waits for every stream.
  int call(const KinetoCall& c)
  {
    const int stream = cpu_chain(c.thread);
    const double from = cpu_point.count(c.thread) ? cpu_point[c.thread] : origin;
    int task = out.graph.add_delay(stream, std::max(0.0, c.ts - from), c.name, TaskLabels{});
    cpu_point[c.thread] = c.ts;
    if (is_sync(c.name)) {
      const int wait = out.graph.add_delay(stream, 0.0, c.name + " (waits)", TaskLabels{});
      for (const auto& [s, last] : last_on_stream)
        out.graph.add_dependency(last, wait);
      cpu_point[c.thread] = c.ts + c.dur; // the CPU goes on from the sync's end
      task = wait;
    }
    if (c.name == "cudaEventRecord")
      record_event(c);
    else if (c.name == "cudaStreamWaitEvent")
      wait_event(c);
    if (c.correlation >= 0)
      call_task[c.correlation] = task;
    ++out.calls;
    return task;
  }

  double op_seconds(const KinetoOp& op)
  {
    if (op.kind != KinetoOp::KERNEL)
      return op.dur;
    if (!op.collective.empty() || op.name.rfind("nccl", 0) == 0) {
      const std::string kind = collective_kind(op.collective);
      if (!o.model_collectives || kind.empty() || op.elements <= 0)
        return op.dur;
      const int ranks = o.ranks > 0 ? o.ranks : std::max(1, op.group_size);
      if (ranks > o.platform->topology.host_count())
        throw std::invalid_argument(fmt::format("the trace's {} has a group of {} ranks and the cluster {} GPUs: give "
                                                "workload.ranks, or a cluster as large as the group",
                                                short_kernel_name(op.name), ranks, o.platform->topology.host_count()));
      std::vector<int> hosts(static_cast<std::size_t>(ranks));
      std::iota(hosts.begin(), hosts.end(), 0);
      ++out.modeled_collectives;
      return ranks < 2 ? 0.0
                       : choose_collective(kind, "auto", op.elements * element_bytes(op.dtype),
                                           group_shape(*o.platform, hosts))
                             .seconds;
    }
    return o.from == o.to ? op.dur : rescale_kernel(op.name, op.dur, *o.from, *o.to);
  }

  // The waits a launch carries: its thread's (inferred) and its stream's (recorded).
  void add_waits(int task, long long stream, long long thread)
  {
    if (thread >= 0) {
      for (const EventMark& m : thread_waits[thread])
        if (m.stream != stream)
          out.graph.add_dependency(m.task, task);
      thread_waits[thread].clear();
      if (wait_all[thread])
        for (const auto& [s, last] : last_on_stream)
          if (s != stream)
            out.graph.add_dependency(last, task);
      wait_all[thread] = false;
      thread_stream[thread] = stream;
    }
    for (int before : stream_waits[stream])
      out.graph.add_dependency(before, task);
    stream_waits[stream].clear();
  }

  int op(const KinetoOp& op, long long thread)
  {
    auto [it, fresh] = gpu_stream.try_emplace(op.stream, -1);
    if (fresh)
      it->second = out.graph.add_stream(0, "stream " + std::to_string(op.stream));
    const bool nccl = !op.collective.empty() || op.name.rfind("nccl", 0) == 0;
    const double seconds = op_seconds(op);
    // Kernels share the GPU (compute); NCCL kernels and copies are priced whole (their own engines and links).
    const int task = op.kind == KinetoOp::KERNEL && !nccl
                         ? out.graph.add_compute(it->second, seconds, short_kernel_name(op.name), "", TaskLabels{})
                         : out.graph.add_delay(it->second, seconds, short_kernel_name(op.name), TaskLabels{});
    (op.kind != KinetoOp::KERNEL ? out.copies : nccl ? out.collectives : out.kernels) += 1;
    out.recorded_gpu_s += op.dur;
    if (auto c = call_task.find(op.correlation); c != call_task.end())
      out.graph.add_dependency(c->second, task);
    add_waits(task, op.stream, thread);
    last_on_stream[op.stream] = task;
    return task;
  }
};

} // namespace

std::string short_kernel_name(const std::string& name)
{
  std::string s = name.substr(0, name.find('('));
  if (s.rfind("void ", 0) == 0)
    s = s.substr(5);
  return s.substr(0, 80);
}

double rescale_kernel(const std::string& name, double seconds, const DeviceSpec& from, const DeviceSpec& to)
{
  static const std::regex gemm("gemm|cutlass|xmma|cublas|conv|wgrad|dgrad|implicit|sm[0-9]+_|ampere_|volta_|hopper_",
                               std::regex::icase);
  static const std::regex half("f16|h16|fp16|half|bf16|h884|h1688|s16816|s1688", std::regex::icase);
  if (std::regex_search(name, gemm)) {
    const std::string dtype = std::regex_search(name, half) ? "fp16" : "tf32";
    const double a = from.peak(dtype), b = to.peak(dtype);
    if (a > 0 && b > 0)
      return seconds * a / b;
  }
  return from.memory_bandwidth > 0 && to.memory_bandwidth > 0 ? seconds * from.memory_bandwidth / to.memory_bandwidth
                                                              : seconds;
}

void check_replay_inputs(const WorkloadEnv& env, const char* kind, const char* trace_key, const std::string& trace,
                         const std::string& from_device, int ranks)
{
  if (env.cluster->is_cpu_cluster())
    throw env.error_at("workload.kind", std::string(kind) + " needs a GPU cluster");
  if (!std::filesystem::is_regular_file(env.source->resolve(trace)))
    throw env.error_at(std::string("workload.") + trace_key, "trace file not found: " + env.source->resolve(trace));
  if (!from_device.empty() && from_device != "auto" && !DeviceCatalog::builtin().find(from_device))
    throw env.error_at("workload.from_device", "'" + from_device + "' is not in the device catalog");
  if (ranks > env.cluster->gpus)
    throw env.error_at("workload.ranks",
                       fmt::format("{} ranks need as many GPUs (the cluster has {})", ranks, env.cluster->gpus));
}

namespace {

// The profiler step a launch at `when` belongs to (-1: none).
int step_of(const KinetoTrace& t, double when)
{
  auto after =
      std::upper_bound(t.steps.begin(), t.steps.end(), when, [](double w, const KinetoStep& s) { return w < s.ts; });
  if (after == t.steps.begin())
    return -1;
  const auto& s = *std::prev(after);
  return when < s.ts + s.dur ? static_cast<int>(std::prev(after) - t.steps.begin()) : -1;
}

// The steps as the CPU annotated them and as the GPU ran them: the GPU's span runs from the first operation launched
// in the first step to the end of the last one launched in the last step. When it is the longer, the GPU set the pace
// (the CPU ran ahead) and the replay is compared on it.
void measure_steps(const KinetoTrace& t, ReplayGraph& out, double gpu_from, double gpu_to)
{
  const double n = static_cast<double>(t.steps.size());
  for (const auto& s : t.steps)
    out.recorded_cpu_step_s += s.dur / n;
  out.recorded_gpu_step_s = out.gpu_first_op >= 0 && !out.last_step_ops.empty() ? (gpu_to - gpu_from) / n : 0;
  out.gpu_bound = out.recorded_gpu_step_s > out.recorded_cpu_step_s;
  out.recorded_step_s = out.gpu_bound ? out.recorded_gpu_step_s : out.recorded_cpu_step_s;
}

} // namespace

ReplayGraph build_replay(const KinetoTrace& t, const ReplayOptions& o)
{
  ReplayBuilder b(t, o);
  for (const auto& w : t.waits)
    if (w.correlation >= 0 && w.stream >= 0 && w.wait_on_stream >= 0 && w.record_correlation >= 0) {
      b.exact_wait[w.correlation] = &w;
      b.exact_record_stream[w.record_correlation] = w.wait_on_stream;
    }
  const int device = t.ops.front().device;
  b.origin = t.ops.front().ts;
  if (!t.calls.empty())
    b.origin = std::min(b.origin, t.calls.front().ts);
  std::map<long long, std::size_t> launch; // correlation -> call index
  for (std::size_t i = 0; i < t.calls.size(); ++i)
    if (t.calls[i].correlation >= 0)
      launch.emplace(t.calls[i].correlation, i);
  // Calls and GPU operations merged in launch order: an operation right after the call that launched it.
  std::vector<std::pair<double, std::size_t>> ops; // (launch time, op index)
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    if (t.ops[i].device == device) {
      auto it = launch.find(t.ops[i].correlation);
      ops.emplace_back(it == launch.end() ? t.ops[i].ts : t.calls[it->second].ts, i);
    }
  std::stable_sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  const double steps_end = t.steps.empty() ? 0 : t.steps.back().ts + t.steps.back().dur;
  std::size_t next_step = 0, c = 0;
  auto next_call = [&] {
    const KinetoCall& call = t.calls[c++];
    const int task = b.call(call);
    for (; next_step < t.steps.size() && t.steps[next_step].ts <= call.ts; ++next_step) {
      if (b.out.step_start.empty())
        b.out.step_lead_s = call.ts - t.steps.front().ts;
      b.out.step_start.push_back(task);
    }
    if (!t.steps.empty() && b.out.end_marker < 0 && call.ts >= steps_end) {
      b.out.end_marker = task;
      b.out.step_tail_s = call.ts - steps_end;
    }
  };
  double gpu_from = 0, gpu_to = 0;
  const int last_step = static_cast<int>(t.steps.size()) - 1;
  for (const auto& [when, i] : ops) {
    while (c < t.calls.size() && t.calls[c].ts <= when)
      next_call();
    auto it = launch.find(t.ops[i].correlation);
    const int task = b.op(t.ops[i], it == launch.end() ? -1 : t.calls[it->second].thread);
    const int step = step_of(t, when);
    if (step == 0 && b.out.gpu_first_op < 0) {
      b.out.gpu_first_op = task;
      gpu_from = t.ops[i].ts;
    }
    if (step >= 0 && step == last_step) {
      b.out.last_step_ops.push_back(task);
      gpu_to = std::max(gpu_to, t.ops[i].ts + t.ops[i].dur);
    }
  }
  while (c < t.calls.size())
    next_call();
  if (!t.steps.empty())
    measure_steps(t, b.out, gpu_from, gpu_to);
  b.out.graph.finalize();
  return std::move(b.out);
}

} // namespace cs
