// The executor-provisioning policy interface (policies.spark_provisioning): how many executors each Spark
// application holds over time, and which ones it gives back.
#pragma once

#include "base/registry.hpp"

#include <vector>

namespace cs {

/** An executor of the application, as its allocation manager sees it. */
struct ExecutorView {
  int id = 0;
  int cores = 1;
  int busy = 0;             // running tasks
  double idle_since = -1;   // when its last task ended, while it has none running (< 0: busy)
  double cpu_share = 0;     // busy core-seconds / (cores x time) since the previous iteration boundary
  double cached_bytes = 0;  // memory-cached blocks it holds
  double storage_bytes = 0; // its storage memory: what its memory share is taken over
};

/** One application at one decision point. */
struct AppView {
  int app = 0;
  double now = 0;
  int max_executors = 1;      // the application's peak demand (what static allocation requests)
  int slots_per_executor = 1; // task slots (cores / task cpus)
  int pending_tasks = 0;      // runnable but not launched
  int running_tasks = 0;
  double backlog_since = -1;    // since when tasks have been pending (< 0: none)
  int requested = 0;            // executors asked for and not yet running
  bool iteration_ended = false; // a job (one iteration of an iterative application) just finished
  std::vector<ExecutorView> executors;
};

struct ProvisioningAction {
  int add = 0;                // further executors to request
  std::vector<int> remove;    // executors to release (must be idle)
  bool migrate_cache = false; // move the removed executors' cached blocks to the survivors first (iSpark)
};

class SparkProvisioning : public Configurable {
public:
  /** Executors requested when the application starts. */
  virtual int initial_executors(const AppView& app) = 0;
  /** Called at every scheduling point of the application (about once a second and at each job's end). */
  virtual ProvisioningAction decide(const AppView& app) = 0;
};

} // namespace cs
