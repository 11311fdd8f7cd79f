// libFuzzer target: the GPU-cluster job, Kineto, Chakra, MoE routing, Spark event-log and step-time readers (the first
// byte picks one: g = GPU job trace, k = Kineto, c = Chakra, m = MoE routing, e = Spark event log, anything else = step
// times; the rest is the file, written to /dev/shm since the readers take paths).
// Each either reads the file or throws InputError; whatever it reads is within its documented bounds.
#include "base/input_error.hpp"
#include "platform/stragglers.hpp"
#include "traces/chakra_trace.hpp"
#include "traces/gpu_job_trace.hpp"
#include "traces/kineto_trace.hpp"
#include "traces/moe_routing_trace.hpp"
#include "traces/spark_event_log.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {
void check(bool ok)
{
  if (!ok)
    std::abort(); // a reader let through a value its bounds refuse
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0)
    return 0;
  static const std::string path = "/dev/shm/cs_fuzz_jobs_" + std::to_string(::getpid());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  try {
    if (data[0] == 'g') {
      cs::GpuTraceSummary summary;
      for (const auto& j : cs::read_gpu_trace("auto", path, summary))
        check(j.gpus >= 1 && j.gpu_milli >= 1 && j.gpu_milli <= 1000 && j.duration_s >= 0 && std::isfinite(j.submit_s));
    } else if (data[0] == 'k') {
      const cs::KinetoTrace t = cs::read_kineto(path);
      check(!t.ops.empty());
      for (const auto& op : t.ops)
        check(op.dur >= 0 && op.ts >= 0 && std::isfinite(op.dur));
    } else if (data[0] == 'c') {
      const cs::ChakraTrace t = cs::read_chakra(path);
      check(!t.nodes.empty() && cs::chakra_order(t).size() == t.nodes.size());
      for (const auto& n : t.nodes)
        check(n.duration >= 0 && std::isfinite(n.duration) && n.comm_bytes >= 0 && std::isfinite(n.comm_bytes));
    } else if (data[0] == 'm') {
      const cs::RoutingTrace t = cs::read_routing_trace(path);
      check(!t.tokens.empty() && t.ranks >= 1 && t.max_expert >= 0);
      for (const auto& [key, experts] : t.tokens)
        for (const auto& [expert, tokens] : experts)
          check(expert >= 0 && expert <= t.max_expert && tokens >= 0 && std::isfinite(tokens));
    } else if (data[0] == 'e') {
      const cs::SparkEventLog log = cs::read_spark_event_log(path);
      check(!log.tasks.empty());
      for (const auto& t : log.tasks)
        check(std::isfinite(t.launch_s) && std::isfinite(t.finish_s) && t.run_s >= 0 && t.input_bytes >= 0);
    } else {
      for (const auto& [worker, steps] : cs::read_step_time_trace(path).steps)
        for (double s : steps)
          check(worker >= 0 && s >= 0 && s <= 1e9);
    }
  } catch (const cs::InputError&) {
  }
  return 0;
}
