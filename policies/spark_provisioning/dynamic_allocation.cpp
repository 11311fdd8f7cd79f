// Spark dynamic allocation (ExecutorAllocationManager) with its defaults: after schedulerBacklogTimeout of pending
// tasks it requests executors, then again every sustainedSchedulerBacklogTimeout while the backlog lasts, doubling the
// request each round (1, 2, 4, ...) up to what the backlog needs; an executor idle for executorIdleTimeout is
// released unless it holds cached blocks (cachedExecutorIdleTimeout is infinite by default).
#include "base/units.hpp"
#include "models/spark/spark_provisioning.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace cs {

class DynamicAllocation : public SparkProvisioning {
public:
  void configure(ObjectReader& r) override
  {
    r.field("min_executors", min_, "spark.dynamicAllocation.minExecutors")
        .field("initial_executors", initial_, "spark.dynamicAllocation.initialExecutors (-1 = min_executors)")
        .field("max_executors", max_, "spark.dynamicAllocation.maxExecutors (0 = unbounded, as Spark's default)")
        .field("scheduler_backlog_timeout", backlog_, "spark.dynamicAllocation.schedulerBacklogTimeout")
        .field("sustained_backlog_timeout", sustained_, "spark.dynamicAllocation.sustainedSchedulerBacklogTimeout")
        .field("executor_idle_timeout", idle_, "spark.dynamicAllocation.executorIdleTimeout")
        .field("cached_executor_idle_timeout", cached_idle_,
               "spark.dynamicAllocation.cachedExecutorIdleTimeout (0 = never release an executor holding cache)");
    r.require_non_negative("min_executors", min_);
    r.require(initial_ >= -1, "initial_executors", "initial_executors must be -1 or more");
    r.require_non_negative("max_executors", max_);
    r.require_positive("scheduler_backlog_timeout", backlog_.value);
    r.require_positive("sustained_backlog_timeout", sustained_.value);
    r.require_positive("executor_idle_timeout", idle_.value);
    r.require_non_negative("cached_executor_idle_timeout", cached_idle_.value);
    r.require(max_ == 0 || max_ >= min_, "max_executors", "max_executors is below min_executors");
  }

  int initial_executors(const AppView&) override { return std::max(min_, initial_ < 0 ? min_ : initial_); }

  ProvisioningAction decide(const AppView& a) override
  {
    ProvisioningAction act;
    auto& s = state_[a.app];
    const int current = static_cast<int>(a.executors.size()) + a.requested;
    const int needed = (a.pending_tasks + a.running_tasks + a.slots_per_executor - 1) / a.slots_per_executor;
    const int ceiling = max_ > 0 ? max_ : needed;
    if (a.backlog_since >= 0 && a.now - a.backlog_since >= backlog_.value - 1e-9) {
      if (a.now >= s.next_add - 1e-9) {
        act.add = std::max(0, std::min({s.to_add, needed - current, ceiling - current}));
        s.to_add = act.add > 0 ? s.to_add * 2 : 1;
        s.next_add = a.now + sustained_.value;
      }
    } else {
      s.to_add = 1;
      s.next_add = 0;
    }
    int count = static_cast<int>(a.executors.size());
    for (const auto& e : a.executors) {
      if (count <= min_ || e.busy > 0 || e.idle_since < 0)
        continue;
      const bool cached = e.cached_bytes > 0;
      if (cached && cached_idle_.value <= 0)
        continue;
      if (a.now - e.idle_since >= (cached ? cached_idle_.value : idle_.value) - 1e-9) {
        act.remove.push_back(e.id);
        --count;
      }
    }
    return act;
  }

private:
  struct State {
    int to_add = 1;
    double next_add = 0;
  };
  int min_ = 0, initial_ = -1, max_ = 0;
  Seconds backlog_{1}, sustained_{1}, idle_{60}, cached_idle_{0};
  std::map<int, State> state_;
};

CS_REGISTER_POLICY(SparkProvisioning, DynamicAllocation, "spark_provisioning", "dynamic",
                   "Spark dynamic allocation with its defaults: exponential ramp-up on backlog, idle release, "
                   "cached executors kept");

} // namespace cs
