// iSpark-style utilisation-aware provisioning for iterative applications (Yang, Rang, Cheng, Wang; IEEE BigData'19,
// TCC'21) [recon from the abstract and policies.md §3]. At each iteration boundary every executor's dominant share
// d = max(cpu share over the iteration, cached bytes / storage memory) is taken; when the mean stays below
// theta_low for `patience` iterations the application shrinks to ceil(n * mean / theta_target) executors, releasing
// those of lowest d after migrating their cached blocks to the survivors (so nothing is recomputed); with a task
// backlog and a mean above theta_high it grows again, doubling its request as Spark's dynamic allocation does.
#include "models/spark/spark_provisioning.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace cs {

class ISpark : public SparkProvisioning {
public:
  void configure(ObjectReader& r) override
  {
    r.field("theta_low", low_, "mean dominant share below which the application shrinks")
        .field("theta_target", target_, "dominant share a shrink aims for")
        .field("theta_high", high_, "mean dominant share above which a backlog grows the application")
        .field("patience", patience_, "iterations below theta_low before shrinking")
        .field("min_executors", min_, "never fewer executors than this");
    r.require(low_ > 0 && low_ < 1, "theta_low", "theta_low must be in (0, 1)");
    r.require(target_ >= low_ && target_ <= 1, "theta_target", "theta_target must be in [theta_low, 1]");
    r.require(high_ >= target_ && high_ <= 1, "theta_high", "theta_high must be in [theta_target, 1]");
    r.require_positive("patience", patience_);
    r.require_positive("min_executors", min_);
  }

  int initial_executors(const AppView& a) override { return a.max_executors; }

  ProvisioningAction decide(const AppView& a) override
  {
    ProvisioningAction act;
    auto& s = state_[a.app];
    const int n = static_cast<int>(a.executors.size());
    if (a.iteration_ended && n > 0) {
      std::vector<std::pair<double, int>> share; // (d, executor)
      for (const auto& e : a.executors)
        share.emplace_back(std::max(e.cpu_share, e.storage_bytes > 0 ? e.cached_bytes / e.storage_bytes : 0.0), e.id);
      const double mean =
          std::accumulate(share.begin(), share.end(), 0.0, [](double t, const auto& d) { return t + d.first; }) / n;
      s.mean = mean;
      s.low_streak = mean < low_ ? s.low_streak + 1 : 0;
      if (s.low_streak >= patience_) {
        const int keep = std::max(min_, static_cast<int>(std::ceil(n * mean / target_ - 1e-9)));
        std::sort(share.begin(), share.end());
        for (int i = 0; i < n - keep; ++i)
          act.remove.push_back(share[i].second);
        act.migrate_cache = true;
        s.low_streak = 0;
      }
    }
    const int current = n + a.requested;
    const int needed = (a.pending_tasks + a.running_tasks + a.slots_per_executor - 1) / a.slots_per_executor;
    if (act.remove.empty() && a.backlog_since >= 0 && s.mean > high_ && needed > current && current < a.max_executors &&
        a.now >= s.next_add) {
      act.add = std::min({s.to_add, needed - current, a.max_executors - current});
      s.to_add *= 2;
      s.next_add = a.now + 1;
    } else if (a.backlog_since < 0) {
      s.to_add = 1;
    }
    return act;
  }

private:
  struct State {
    int low_streak = 0;
    double mean = 1; // the last iteration's mean dominant share (1 before the first boundary)
    int to_add = 1;
    double next_add = 0;
  };
  double low_ = 0.5, target_ = 0.7, high_ = 0.8;
  int patience_ = 1, min_ = 1;
  std::map<int, State> state_;
};

CS_REGISTER_POLICY(SparkProvisioning, ISpark, "spark_provisioning", "ispark",
                   "iSpark-style: shrink at iteration boundaries when executors are under-used, migrating their "
                   "cached blocks [recon]");

} // namespace cs
