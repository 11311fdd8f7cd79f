// A new MapReduce scheduler with a parameter is one file: this test-only policy registers itself, reads its own
// parameter from `policies.mapreduce: {name: ..., ...}`, and runs in a scenario without touching anything else.
#include "base/registry.hpp"
#include "policies/mapreduce/task_scheduler.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/run/scenario_run.hpp"
#include "sim/scenario/scenario.hpp"

#include <gtest/gtest.h>

namespace cs {
namespace {

/** Places tasks in FIFO order on the offers in turn, at most `per_round` of them each heartbeat round. */
class FirstFitScheduler : public MapReduceScheduler {
public:
  void configure(ObjectReader& r) override
  {
    r.field("per_round", per_round_, "tasks placed per scheduling round");
    r.require_positive("per_round", per_round_);
  }
  std::vector<TaskPlacement> schedule(const SchedulingRound& round, const SchedulerContext&) override
  {
    std::vector<TaskPlacement> out;
    std::size_t k = 0;
    for (const auto& offer : round.offers)
      for (int free = offer.free; free > 0 && k < round.tasks.size() && static_cast<int>(k) < per_round_; --free)
        out.push_back({static_cast<int>(k++), offer.host});
    return out;
  }

private:
  int per_round_ = 1000;
};

CS_REGISTER_POLICY(MapReduceScheduler, FirstFitScheduler, "mapreduce", "test-first-fit",
                   "test only: FIFO tasks onto offers in turn, per_round at most");

Scenario scenario(const std::string& policy)
{
  const std::string text = "name: ext\n"
                           "cluster: {device: cpu-node, racks: 2, hosts_per_rack: 4, host: {cores: 4, disk_bandwidth: "
                           "500MB/s}}\n"
                           "workload:\n  kind: mapreduce\n  mapreduce: {synthetic: {jobs: 4, min_input: 512MiB, "
                           "max_input: 1GiB}}\n"
                           "policies:\n  mapreduce: " +
                           policy + "\n";
  auto source = std::make_shared<SourceInfo>();
  source->file = "ext.yaml";
  Scenario s = parse_scenario(YAML::Load(text), source);
  check_scenario(s);
  return s;
}

} // namespace
} // namespace cs

TEST(SchedulerExtension, ATestOnlySchedulerReadsItsParameterAndRuns)
{
  for (const char* per_round : {"1", "64"}) {
    const std::string text = cs::run_isolated([&] {
      const auto s = cs::scenario(std::string("{name: test-first-fit, per_round: ") + per_round + "}");
      return cs::run_scenario(s, cs::RunOptions{}).report.dump();
    });
    const auto report = nlohmann::json::parse(text);
    EXPECT_GT(report["metrics"]["makespan_s"].get<double>(), 0) << per_round;
  }
  // Its parameter is checked where it is read, and an unknown one is refused with its position.
  try {
    cs::scenario("{name: test-first-fit, per_round: 0}");
    FAIL() << "per_round 0 was accepted";
  } catch (const cs::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("per_round"), std::string::npos) << e.where();
    EXPECT_EQ(e.line(), 7); // the policy's line
  }
  try {
    cs::scenario("{name: test-first-fit, per_rund: 3}");
    FAIL() << "an unknown parameter was accepted";
  } catch (const cs::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'per_round'"), std::string::npos) << e.where();
  }
}
