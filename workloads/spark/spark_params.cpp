#include "workloads/spark/spark_params.hpp"

#include "models/spark/spark_app.hpp"

#include <stdexcept>

namespace cs {
namespace {

const std::vector<std::string> kWorkloads{"kmeans", "pagerank", "lr", "wordcount", "terasort"};
const std::vector<std::string> kProfiles{"tiny", "small", "large", "huge", "gigantic", "bigdata"};

void read_app(ObjectReader& r, SparkAppParams& a)
{
  std::vector<std::string> workloads = kWorkloads;
  workloads.insert(workloads.begin(), "");
  r.choice("workload", a.workload, workloads, "HiBench-like generator (or give event_log)")
      .choice("profile", a.profile, kProfiles, "HiBench scale profile (data sizes and iterations)")
      .field("event_log", a.event_log, "replay this Spark event log (JSON lines), relative to the scenario")
      .field("submit", a.submit, "submission time of the first copy")
      .field("count", a.count, "copies of this application")
      .field("interarrival", a.interarrival, "time between copies")
      .field("executors", a.executors, "peak executor demand (0 = the log's, or 4)")
      .field("partitions", a.partitions, "partitions of the input RDD (0 = input / block size)")
      .field("iterations", a.iterations, "iterations of an iterative workload (0 = the profile's)")
      .field("storage", a.storage, "storage level of the cached RDD (default: the workload's, HiBench MEMORY_ONLY)")
      .field("data_scale", a.data_scale, "multiplies the profile's data size")
      .field("converge", a.converge,
             "iterative workloads: share of the previous iteration's partitions still active (1 = all)")
      .field("driver_time", a.driver_time, "driver-side work between two jobs")
      .choice("executor_waits", a.recorded_executor_waits, {{"recorded", true}, {"startup", false}},
              "event logs: recorded (each executor registers no earlier than the log recorded: its wait for a "
              "container) or startup (granted plus executor_startup only)");
  if (r.describing())
    return;
  if (a.workload.empty() == a.event_log.empty())
    r.fail_at("workload", "give either a workload generator or an event_log");
  if (!a.recorded_executor_waits && a.event_log.empty())
    r.fail_at("executor_waits", "executor_waits applies to event-log replays only");
  r.require_non_negative("submit", a.submit.value);
  r.require_positive("count", a.count);
  r.require_at_most("count", a.count, 100000);
  r.require_non_negative("interarrival", a.interarrival.value);
  r.require_non_negative("executors", a.executors);
  r.require_at_most("executors", a.executors, 100000);
  r.require_non_negative("partitions", a.partitions);
  r.require_at_most("partitions", a.partitions, 1000000);
  r.require_non_negative("iterations", a.iterations);
  r.require_at_most("iterations", a.iterations, 10000);
  r.require_positive("data_scale", a.data_scale);
  r.require_at_most("data_scale", a.data_scale, 1e6);
  r.require(a.converge > 0 && a.converge <= 1, "converge", "converge must be in (0, 1]");
  r.require_non_negative("driver_time", a.driver_time.value);
  if (!a.storage.empty()) {
    try {
      storage_level_of(a.storage);
    } catch (const std::invalid_argument& e) {
      r.fail_at("storage", e.what());
    }
  }
}

} // namespace

void read_spark(ObjectReader r, SparkParams& p, bool selected)
{
  r.list<SparkAppParams>("applications", p.applications, "Spark applications: generated or replayed", read_app)
      .choice("manager", p.manager, {{"yarn", SparkManager::YARN}, {"standalone", SparkManager::STANDALONE}},
              "cluster manager: yarn (containers of heap plus overhead, on the host with the most free cores) or "
              "standalone (heap only, workers taken round-robin: spreadOut)")
      .field("executor_cores", p.executor_cores, "spark.executor.cores: task slots per executor")
      .field("executor_memory", p.executor_memory, "spark.executor.memory (heap)")
      .field("memory_fraction", p.memory_fraction, "spark.memory.fraction: unified region of (heap - reserved)")
      .field("storage_fraction", p.storage_fraction,
             "spark.memory.storageFraction: the part of the unified region execution cannot evict")
      .field("reserved_memory", p.reserved_memory, "heap Spark reserves before the unified region (300 MiB)")
      .field("executor_startup", p.executor_startup, "from a granted container to a registered executor")
      .field("locality_wait", p.locality_wait, "spark.locality.wait: delay scheduling per locality level")
      .field("deserialize_rate", p.deserialize_rate,
             "bytes/s a core deserialises a block read from a pool, another executor or disk")
      .field("scan_rate", p.scan_rate, "bytes/s a core parses HDFS input into records (generators)")
      .field("cpu_scale", p.cpu_scale, "multiplies every generated compute time")
      .field("replication", p.replication, "HDFS replicas of input and output blocks")
      .field("block_size", p.block_size, "HDFS block size (default partitions = input / block size)")
      .field("tick", p.tick, "how often the allocation manager looks at each application (at least 1 ms)");
  r.finish();
  r.require_positive("executor_cores", p.executor_cores);
  r.require_at_most("executor_cores", p.executor_cores, 4096);
  r.require_positive("executor_memory", p.executor_memory.value);
  r.require(p.memory_fraction > 0 && p.memory_fraction <= 1, "memory_fraction", "memory_fraction must be in (0, 1]");
  r.require(p.storage_fraction >= 0 && p.storage_fraction <= 1, "storage_fraction",
            "storage_fraction must be in [0, 1]");
  r.require_non_negative("reserved_memory", p.reserved_memory.value);
  r.require_non_negative("executor_startup", p.executor_startup.value);
  r.require_non_negative("locality_wait", p.locality_wait.value);
  r.require_positive("deserialize_rate", p.deserialize_rate.value);
  r.require_positive("scan_rate", p.scan_rate.value);
  r.require_positive("cpu_scale", p.cpu_scale);
  r.require_at_most("cpu_scale", p.cpu_scale, 1e6);
  r.require_positive("replication", p.replication);
  r.require_positive("block_size", p.block_size.value);
  r.require(p.tick.value >= 1e-3, "tick", "tick must be at least 1 ms (the master wakes every tick)");
  if (!r.describing() && p.executor_memory.value <= p.reserved_memory.value)
    r.fail_at("executor_memory", "executor_memory must exceed reserved_memory (Spark refuses smaller heaps)");
  if (selected && p.applications.empty())
    r.fail_at("applications", "a spark workload needs at least one application");
}

} // namespace cs
