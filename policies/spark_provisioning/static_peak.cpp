// Static allocation (Spark's default, spark.dynamicAllocation.enabled = false): the application asks for its peak
// demand at start and holds every executor until it ends.
#include "models/spark/spark_provisioning.hpp"

namespace cs {

class StaticPeak : public SparkProvisioning {
public:
  int initial_executors(const AppView& app) override { return app.max_executors; }
  ProvisioningAction decide(const AppView&) override { return {}; }
};

CS_REGISTER_POLICY(SparkProvisioning, StaticPeak, "spark_provisioning", "static",
                   "static peak allocation: every executor from start to end (Spark's default)");

} // namespace cs
