// What a Spark workload reads from `workload.spark:`: applications (HiBench-like or an event log), executors, memory.
#pragma once

#include "base/yaml_reader.hpp"

#include <string>
#include <vector>

namespace cs {

/** One application entry (or `count` copies of it, submitted `interarrival` apart). */
struct SparkAppParams {
  std::string workload;          // kmeans | pagerank | lr | wordcount | terasort (HiBench-like generators)
  std::string profile = "large"; // HiBench scale profile: tiny small large huge gigantic bigdata
  std::string event_log;         // replay a Spark event log instead (relative to the scenario)
  Seconds submit;
  int count = 1;
  Seconds interarrival;
  int executors = 0;                   // peak demand (static allocation); 0 = the log's or 4
  int partitions = 0;                  // 0 = input / 128 MiB
  int iterations = 0;                  // 0 = the profile's
  std::string storage;                 // persistence of the cached RDD; "" = the workload's (HiBench: MEMORY_ONLY)
  double data_scale = 1;               // multiplies the profile's data size
  double converge = 1;                 // iterative: share of partitions still active each further iteration (1 = all)
  Seconds driver_time{0.5};            // driver-side work between two jobs (collecting results, updating the model)
  bool recorded_executor_waits = true; // event logs: executors register no earlier than the log recorded
};

/** The cluster manager: yarn (containers of heap plus overhead, on the host with the most free cores) or
 *  standalone (one executor per worker in turn). */
enum class SparkManager { YARN, STANDALONE };

struct SparkParams {
  std::vector<SparkAppParams> applications;
  SparkManager manager = SparkManager::YARN; // how executors are sized and placed
  int executor_cores = 4;                    // spark.executor.cores (HiBench's default)
  Bytes executor_memory{4.0 * 1073741824.0}; // spark.executor.memory (heap)
  double memory_fraction = 0.6;              // spark.memory.fraction
  double storage_fraction = 0.5;             // spark.memory.storageFraction
  Bytes reserved_memory{300.0 * 1048576.0};
  Seconds executor_startup{2};  // from a granted container to a registered executor
  Seconds locality_wait{3};     // spark.locality.wait
  Rate deserialize_rate{500e6}; // bytes/s one core turns serialized blocks (pool, remote, disk) into objects
  Rate scan_rate{100e6};        // bytes/s one core parses HDFS text input into records (generators)
  double cpu_scale = 1;         // multiplies every generated compute time (slower or faster cores)
  int replication = 3;          // HDFS replicas of input and output
  Bytes block_size{134217728.0};
  Seconds tick{1}; // how often the allocation manager looks at each application
};

/** Reads `workload.spark:`; `selected` when this is the scenario's workload (then it must have applications). */
void read_spark(ObjectReader r, SparkParams& p, bool selected);

} // namespace cs
