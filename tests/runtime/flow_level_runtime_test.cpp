// The flow-level actor runtime (backend analytical) against SimGrid's network and disks on cases with one bottleneck
// per flow, where both must agree: shares weighted by route latency, disks shared by reads and writes, latency paid
// before the bytes, and a killed waiter's flow cancelled.
#include "models/devices/device_catalog.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/runtime/simgrid_actor_runtime.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

cs::PlatformSpec two_racks_of_two()
{
  cs::ClusterParams c;
  c.device = "cpu-node";
  c.racks = 2;
  c.hosts_per_rack = 2;
  c.network.kind = cs::NetworkKind::TREE;
  c.network.host_link.value = 125e6;
  c.network.latency.value = 50e-6;
  c.host.cores = 2;
  c.host.disk_bandwidth.value = 200e6;
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("cpu-node"));
}

/** End times of: host 1 -> 0 (same rack) and host 2 -> 0 (other rack) together, 100 MB each; then a read and a
 *  write on host 3's disk together; then a lone flow 3 -> 1; then a flow whose waiter is killed beside a flow that
 *  speeds up once it is gone. Runs in a child process (one SimGrid engine each). */
std::vector<double> scenario(bool flow_level)
{
  const std::string text = cs::run_isolated([&] {
    auto platform = two_racks_of_two();
    auto rt = flow_level ? cs::make_flow_level_actor_runtime(platform) : cs::make_simgrid_actor_runtime(platform);
    std::vector<double> ends;
    rt->run(0, [&] {
      auto near = rt->flow_async(1, 0, 100e6);
      auto far = rt->flow_async(2, 0, 100e6);
      std::vector<cs::ActivityPtr> both{near, far};
      const std::size_t first = rt->wait_any(both);
      ends.push_back(first == 0 ? rt->now() : -1);
      rt->wait(far);
      ends.push_back(rt->now());
      const double t0 = rt->now();
      auto read = rt->disk_async(3, 100e6, false);
      auto write = rt->disk_async(3, 300e6, true);
      rt->wait(read);
      ends.push_back(rt->now() - t0);
      rt->wait(write);
      ends.push_back(rt->now() - t0);
      const double t1 = rt->now();
      rt->wait(rt->flow_async(3, 1, 1e6));
      ends.push_back(rt->now() - t1);
      const double t2 = rt->now();
      auto victim = rt->spawn("victim", 1, [&] { rt->wait(rt->flow_async(1, 0, 1e9)); });
      auto other = rt->flow_async(2, 0, 100e6);
      rt->sleep_for(0.5);
      victim->kill();
      rt->wait(other);
      ends.push_back(rt->now() - t2);
    });
    return nlohmann::json(ends).dump();
  });
  return nlohmann::json::parse(text).get<std::vector<double>>();
}

TEST(FlowLevelRuntime, AgreesWithSimgridWhereEachFlowHasOneBottleneck)
{
  const auto sg = scenario(false);
  const auto fl = scenario(true);
  ASSERT_EQ(sg.size(), 6u);
  ASSERT_EQ(fl.size(), 6u);
  // The near flow (2 links, 100 us) outweighs the far one (6 links) three to one on host 0's downlink.
  EXPECT_GT(sg[0], 0) << "the near flow ends first on SimGrid too";
  for (std::size_t i = 0; i < sg.size(); ++i)
    EXPECT_NEAR(fl[i], sg[i], 1e-6 * sg[i] + 1e-6) << "measurement " << i;
  // Lone 1 MB flow between racks (4 links of 50 us): latency, then the bytes at the host link's rate.
  EXPECT_NEAR(fl[4], 4 * 50e-6 + 1e6 / 125e6, 1e-9);
  // The other flow (4 links) joins at 200 us beside the victim (2 links, twice its weight): a third of the downlink
  // until the kill at 0.5 s, then all of it.
  const double shared = (0.5 - 4 * 50e-6) * 125e6 / 3;
  EXPECT_NEAR(fl[5], 0.5 + (100e6 - shared) / 125e6, 1e-6);
}

} // namespace

TEST(ActorRuntimes, AnExceptionInAnActorEndsTheRunAndComesBackFromRun)
{
  // Once an abort (exit 134): an exception escaping an actor's body took the whole process down. Now every other
  // actor is killed and run() rethrows it, on both runtimes.
  for (bool flow_level : {false, true}) {
    const std::string text = cs::run_isolated([&] {
      auto platform = two_racks_of_two();
      auto rt = flow_level ? cs::make_flow_level_actor_runtime(platform) : cs::make_simgrid_actor_runtime(platform);
      try {
        rt->run(0, [&] {
          rt->spawn("waiter", 1, [&] { rt->wait(rt->flow_async(1, 0, 1e12)); }); // would run for hours
          rt->spawn("thrower", 2, [&] {
            rt->sleep_for(1.0);
            throw std::out_of_range("map::at");
          });
          rt->sleep_for(1e6);
        });
      } catch (const std::out_of_range& e) {
        return std::string("caught ") + e.what() + " at " + std::to_string(rt->now());
      }
      return std::string("not caught");
    });
    EXPECT_EQ(text.rfind("caught map::at at 1.0", 0), 0u) << text;
  }
}
