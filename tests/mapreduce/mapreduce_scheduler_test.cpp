// The MapReduce scheduling policies on hand-built rounds.
#include "base/registry.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"
#include "policies/mapreduce/data_spread.hpp"
#include "policies/mapreduce/task_scheduler.hpp"

#include <gtest/gtest.h>

namespace {

using cs::CandidateTask;
using cs::SchedulingRound;

/** 2 pods x 2 racks x 2 hosts: hosts 0-1 rack0, 2-3 rack1, 4-5 rack2, 6-7 rack3. */
struct SchedulerFixture {
  cs::PlatformSpec platform;
  cs::TopologyCost cost;
  std::mt19937_64 rng{1};
  cs::SchedulerContext ctx;

  explicit SchedulerFixture(std::vector<std::string> middleboxes = {})
      : platform(make()), cost(platform.topology, {0, 1, 2, 4}, middleboxes)
  {
    ctx.cost = &cost;
    ctx.rng = &rng;
  }
  static cs::PlatformSpec make()
  {
    cs::ClusterParams c;
    c.device = "cpu-node";
    c.racks = 4;
    c.hosts_per_rack = 2;
    c.network.kind = cs::NetworkKind::TREE;
    c.network.racks_per_agg = 2;
    return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("cpu-node"));
  }
};

CandidateTask map_task(int job, int index, std::vector<int> replicas, double bytes = 100)
{
  CandidateTask t;
  t.job = job;
  t.task = index;
  t.map = true;
  t.bytes = bytes;
  t.data_hosts = std::move(replicas);
  t.pending_maps_of_job = 1;
  return t;
}

CandidateTask reduce_task(int job, int index, std::vector<int> hosts, std::vector<double> bytes)
{
  CandidateTask t;
  t.job = job;
  t.task = index;
  t.map = false;
  t.data_hosts = std::move(hosts);
  t.data_bytes = std::move(bytes);
  for (double b : t.data_bytes)
    t.bytes += b;
  return t;
}

std::unique_ptr<cs::MapReduceScheduler> make(const std::string& name)
{
  return cs::Registry<cs::MapReduceScheduler>::instance().create(name);
}

TEST(MapReduceSchedulers, AllFiveAreRegistered)
{
  for (const char* name : {"fifo", "capacity", "pna", "hit", "pat"})
    EXPECT_TRUE(cs::Registry<cs::MapReduceScheduler>::instance().has(name)) << name;
}

TEST(CapacityScheduler, DelaySchedulingWaitsForLocalityThenTakesRackLocal)
{
  SchedulerFixture f;
  // The scheduler reads its own parameters, as `policies.mapreduce: {name: capacity, ...}` gives them.
  auto configured = [] {
    auto s = make("capacity");
    const YAML::Node params = YAML::Load("{node_locality_delay: 3, rack_locality_additional_delay: 100}");
    cs::ObjectReader reader(params, std::make_shared<cs::SourceInfo>(), "policies.mapreduce");
    s->configure(reader);
    return s;
  };
  auto sched = configured();
  SchedulingRound r;
  r.tasks = {map_task(0, 0, {0})}; // the split is on host 0; only host 1 (same rack) has room
  r.offers = {{1, 2}};
  r.queues = {{1.0, 0}};
  EXPECT_TRUE(sched->schedule(r, f.ctx).empty()); // miss 1
  EXPECT_TRUE(sched->schedule(r, f.ctx).empty()); // miss 2
  auto third = sched->schedule(r, f.ctx);         // miss 3 = node-locality-delay: rack-local is fine now
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].host, 1);
  // An off-rack host waits for the further delay.
  auto fresh = configured();
  r.offers = {{4, 1}};
  for (int i = 0; i < 50; ++i)
    EXPECT_TRUE(fresh->schedule(r, f.ctx).empty());
  // The node-local host takes it at once.
  auto local = configured();
  r.offers = {{0, 1}};
  ASSERT_EQ(local->schedule(r, f.ctx).size(), 1u);
}

TEST(CapacityScheduler, ReducersTakeOneOffSwitchContainerPerHeartbeat)
{
  SchedulerFixture f;
  auto sched = make("capacity");
  SchedulingRound r;
  for (int i = 0; i < 4; ++i)
    r.tasks.push_back(reduce_task(0, i, {0}, {10}));
  r.offers = {{5, 4}, {6, 4}};
  r.queues = {{1.0, 0}};
  auto out = sched->schedule(r, f.ctx);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[0].host, out[1].host);
}

TEST(CapacityScheduler, TheQueueFurthestBelowItsShareGoesFirst)
{
  SchedulerFixture f;
  auto sched = make("capacity");
  SchedulingRound r;
  auto a = map_task(0, 0, {3});
  a.queue = 0;
  auto b = map_task(1, 0, {3});
  b.queue = 1;
  r.tasks = {a, b};
  r.offers = {{3, 1}};
  r.queues = {{0.5, 10}, {0.5, 2}}; // queue 1 uses less of its share
  auto out = sched->schedule(r, f.ctx);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].task, 1);
}

TEST(FifoScheduler, TheOldestJobGetsTheContainerAndItsBestTask)
{
  SchedulerFixture f;
  auto sched = make("fifo");
  SchedulingRound r;
  r.tasks = {map_task(0, 0, {6}), map_task(0, 1, {2}), map_task(1, 0, {2})};
  r.offers = {{2, 1}};
  auto out = sched->schedule(r, f.ctx);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].task, 1); // job 0's node-local map, not job 1's
}

TEST(PnaScheduler, LaunchProbabilityFallsWithCost)
{
  SchedulerFixture f;
  SchedulingRound r;
  r.tasks = {map_task(0, 0, {0})};
  r.offers = {{0, 1}};
  auto sched = make("pna");
  EXPECT_EQ(sched->schedule(r, f.ctx).size(), 1u); // local: p = 1
  r.offers = {{7, 1}};                             // off-pod: p = (1 + 0) / (1 + 4)
  int launched = 0;
  for (int i = 0; i < 2000; ++i)
    launched += static_cast<int>(sched->schedule(r, f.ctx).size());
  EXPECT_NEAR(launched / 2000.0, 0.2, 0.03);
}

TEST(HitScheduler, StableMatchingPrefersDataHolders)
{
  SchedulerFixture f;
  auto sched = make("hit");
  SchedulingRound r;
  // Both reducers want host 0; host 0 has one container and prefers the one with more data there.
  r.tasks = {reduce_task(0, 0, {0, 2}, {10, 5}), reduce_task(1, 0, {0, 2}, {100, 1})};
  r.offers = {{0, 1}, {2, 1}, {7, 1}};
  auto out = sched->schedule(r, f.ctx);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& p : out)
    EXPECT_EQ(p.host, p.task == 1 ? 0 : 2) << "task " << p.task;
  // Maps go node-local when their hosts have room.
  r.tasks = {map_task(0, 0, {4}), map_task(0, 1, {6}), map_task(0, 2, {1})};
  r.offers = {{1, 1}, {4, 1}, {6, 1}};
  out = sched->schedule(r, f.ctx);
  ASSERT_EQ(out.size(), 3u);
  for (const auto& p : out)
    EXPECT_EQ(p.host, r.tasks[p.task].data_hosts[0]);
}

TEST(HitScheduler, SpreadsOneJobsReducersOverHosts)
{
  SchedulerFixture f;
  auto sched = make("hit");
  SchedulingRound r;
  r.tasks = {reduce_task(0, 0, {0}, {100}), reduce_task(0, 1, {0}, {100})};
  r.offers = {{0, 2}, {1, 2}};
  auto out = sched->schedule(r, f.ctx);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[0].host, out[1].host);
}

TEST(HitScheduler, ResultIsStable)
{
  // No task and host would both rather be matched to each other than to what they got (costs all distinct).
  SchedulerFixture f;
  auto sched = make("hit");
  SchedulingRound r;
  std::mt19937_64 gen(5);
  std::uniform_int_distribution<int> host(0, 7);
  for (int t = 0; t < 12; ++t)
    r.tasks.push_back(reduce_task(t, 0, {host(gen), host(gen)}, {1.0 + t, 50.0 + 3 * t}));
  r.offers = {{0, 2}, {2, 1}, {5, 2}, {7, 1}};
  auto out = sched->schedule(r, f.ctx);
  ASSERT_EQ(out.size(), 6u);
  std::map<int, int> match;
  std::map<int, std::vector<int>> held;
  for (const auto& p : out) {
    match[p.task] = p.host;
    held[p.host].push_back(p.task);
  }
  auto cost = [&](int t, int h) { return cs::DataSpread(r.tasks[t], f.cost).cost_at(h); };
  auto data = [&](int t, int h) { return cs::DataSpread(r.tasks[t], f.cost).bytes_at(h); };
  for (int t = 0; t < 12; ++t)
    for (const auto& o : r.offers) {
      const bool matched = match.count(t);
      if (matched && cost(t, o.host) >= cost(t, match[t]))
        continue; // t does not prefer this host
      // The host must be full of tasks it prefers to t.
      ASSERT_EQ(static_cast<int>(held[o.host].size()), o.free) << "task " << t << " host " << o.host;
      for (int other : held[o.host]) {
        const bool better = data(other, o.host) > data(t, o.host) ||
                            (data(other, o.host) == data(t, o.host) && cost(other, o.host) <= cost(t, o.host));
        EXPECT_TRUE(better) << "blocking pair: task " << t << " host " << o.host;
      }
    }
}

TEST(PatScheduler, LocalSwapsLowerThePolicyCost)
{
  SchedulerFixture f({"agg0"});
  auto sched = make("pat");
  SchedulingRound r;
  // Greedy in FIFO order gives task 0 host 0 (its cheapest) and leaves task 1, with 10x the data there, host 6.
  r.tasks = {reduce_task(0, 0, {0}, {10}), reduce_task(1, 0, {0}, {100})};
  r.offers = {{0, 1}, {6, 1}};
  auto out = sched->schedule(r, f.ctx);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& p : out)
    EXPECT_EQ(p.host, p.task == 1 ? 0 : 6);
  // Its costs are policy-compliant: host 4 to host 6 crosses agg0 (8 hops), host 4 to host 0 only 6.
  EXPECT_DOUBLE_EQ(cs::policy_cost(reduce_task(0, 0, {4}, {1}), 6, f.cost), 8);
  EXPECT_DOUBLE_EQ(cs::policy_cost(reduce_task(0, 0, {4}, {1}), 0, f.cost), 6);
  EXPECT_DOUBLE_EQ(cs::DataSpread(reduce_task(0, 0, {4, 5}, {1, 2}), f.cost).policy_cost_at(6), 24);
}

} // namespace
