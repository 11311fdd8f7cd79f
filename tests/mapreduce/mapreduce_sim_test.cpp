// MapReduce jobs run on SimGrid, with SimGrid's network or the flow-level one (backend analytical): conservation
// of bytes, completion of edge cases, speculation, determinism, and the two networks' agreement.
#include "base/registry.hpp"
#include "models/dataflow/hdfs_placement.hpp"
#include "models/devices/device_catalog.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/runtime/simgrid_actor_runtime.hpp"
#include "workloads/mapreduce/mapreduce_metrics.hpp"
#include "workloads/mapreduce/mapreduce_sim.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

cs::PlatformSpec cluster()
{
  cs::ClusterParams c;
  c.device = "cpu-node";
  c.racks = 2;
  c.hosts_per_rack = 3;
  c.network.kind = cs::NetworkKind::TREE;
  c.host.cores = 2;
  c.host.disk_bandwidth.value = 200e6;
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("cpu-node"));
}

cs::MapReduceJob job(const cs::ClusterLayout& layout, int maps, int reduces, double split, double shuffle,
                     double output, double submit, std::mt19937_64& rng)
{
  cs::MapReduceJob j;
  j.id = "j" + std::to_string(static_cast<int>(submit));
  j.submit_s = submit;
  for (int m = 0; m < maps; ++m)
    j.maps.push_back({split, cs::place_block(layout, -1, 3, rng), split / 50e6, {}, {}, false});
  j.input_bytes = maps * split;
  j.reduces = reduces;
  j.shuffle_bytes = shuffle;
  j.output_bytes = output;
  for (int r = 0; r < reduces; ++r)
    j.reduce_compute_s.push_back(shuffle / reduces / 50e6);
  return j;
}

/** Runs in a child process (one SimGrid engine each) and returns metrics + breakdown as JSON. */
nlohmann::json simulate(const std::vector<cs::MapReduceJob>& jobs, const cs::MapReduceParams& p,
                        const std::string& policy = "capacity", std::uint64_t seed = 1, bool flow_level = false)
{
  auto text = cs::run_isolated([&] {
    auto platform = cluster();
    cs::TopologyCost cost(platform.topology, p.level_costs, p.middleboxes);
    auto sched = cs::Registry<cs::MapReduceScheduler>::instance().create(policy);
    auto runtime = flow_level ? cs::make_flow_level_actor_runtime(platform) : cs::make_simgrid_actor_runtime(platform);
    auto outcome = cs::simulate_mapreduce(*runtime, jobs, platform, p, *sched, cost, seed);
    auto m = cs::mapreduce_metrics(outcome, cost);
    nlohmann::json j;
    for (const auto& [k, v] : m.values())
      j[k] = v;
    for (const auto& [k, v] : m.breakdown)
      j[k] = v;
    j["finished"] = 0;
    for (const auto& rec : outcome.jobs)
      j["finished"] = j["finished"].get<int>() + (rec.finish > rec.submit ? 1 : 0);
    return j.dump();
  });
  return nlohmann::json::parse(text);
}

TEST(MapReduceSim, EveryByteIsAccountedFor)
{
  auto platform = cluster();
  auto layout = cs::ClusterLayout::of(platform.topology);
  std::mt19937_64 rng(3);
  std::vector<cs::MapReduceJob> jobs{job(layout, 8, 3, 64e6, 300e6, 30e6, 0, rng),
                                     job(layout, 4, 2, 64e6, 100e6, 10e6, 2, rng)};
  cs::MapReduceParams p;
  p.containers_per_host = 2;
  auto m = simulate(jobs, p);
  EXPECT_EQ(m["finished"], 2);
  EXPECT_NEAR(m["map_read_bytes"].get<double>(), 12 * 64e6, 12);
  EXPECT_NEAR(m["shuffle_bytes"].get<double>(), 400e6, 10);
  // Each reducer's output goes to two more replicas over the network.
  EXPECT_NEAR(m["output_bytes"].get<double>(), 2 * 40e6, 10);
  EXPECT_GT(m["mean_jct_s"].get<double>(), 0);
  EXPECT_LE(m["p50_jct_s"].get<double>(), m["p95_jct_s"].get<double>());
  EXPECT_GE(m["makespan_s"].get<double>(), 2 + m["p50_jct_s"].get<double>() * 0);
  EXPECT_NEAR(m["map_locality_node"].get<double>() + m["map_locality_rack"].get<double>() +
                  m["map_locality_off_rack"].get<double>(),
              1.0, 1e-12);
  EXPECT_GT(m["utilization"].get<double>(), 0);
  EXPECT_LE(m["utilization"].get<double>(), 1);
  EXPECT_EQ(m["containers"], 12);
}

TEST(MapReduceSim, TinyAndMapOnlyJobsFinish)
{
  // A 1-byte split with a sub-byte shuffle once hung: SimGrid leaves zero-byte disk operations pending.
  auto layout = cs::ClusterLayout::of(cluster().topology);
  std::mt19937_64 rng(1);
  std::vector<cs::MapReduceJob> jobs{job(layout, 1, 1, 1, 0.99, 6.5, 0, rng), job(layout, 3, 0, 10e6, 0, 3e6, 1, rng),
                                     job(layout, 1, 1, 0.03, 1.3, 0, 1.5, rng)};
  cs::MapReduceParams p;
  for (bool flow_level : {false, true})
    for (const char* policy : {"fifo", "capacity", "pna", "hit", "pat"}) {
      auto m = simulate(jobs, p, policy, 1, flow_level);
      EXPECT_EQ(m["finished"], 3) << policy << (flow_level ? " (analytical)" : "");
    }
}

TEST(MapReduceSim, StartUpCommitAndTheApplicationMasterLengthenAJob)
{
  // 12 maps of 1.28 s on 6 one-container hosts: two waves. A job's start-up and commit add to its JCT; an AM that
  // holds one of the 6 containers leaves 5, so the maps need a third wave.
  auto layout = cs::ClusterLayout::of(cluster().topology);
  std::mt19937_64 rng(5);
  std::vector<cs::MapReduceJob> jobs{job(layout, 12, 0, 64e6, 0, 0, 0, rng)};
  cs::MapReduceParams p;
  p.containers_per_host = 1;
  // (FIFO: no locality delay, so no wave depends on which hosts heartbeat first)
  const double plain = simulate(jobs, p, "fifo")["mean_jct_s"].get<double>();
  jobs[0].startup_s = 5;
  jobs[0].commit_s = 3;
  const double overheads = simulate(jobs, p, "fifo")["mean_jct_s"].get<double>();
  EXPECT_NEAR(overheads - plain, 8, 0.5) << plain << " -> " << overheads;
  jobs[0].startup_s = jobs[0].commit_s = 0;
  p.am_container = true;
  const double with_am = simulate(jobs, p, "fifo")["mean_jct_s"].get<double>();
  EXPECT_GT(with_am - plain, 0.8 * 64e6 / 50e6);
}

TEST(MapReduceSim, SpeculationRescuesMapsOnSlowHosts)
{
  auto layout = cs::ClusterLayout::of(cluster().topology);
  std::mt19937_64 rng(2);
  std::vector<cs::MapReduceJob> jobs{job(layout, 24, 2, 128e6, 50e6, 5e6, 0, rng)};
  cs::MapReduceParams p;
  p.slow_host_fraction = 0.34;
  p.slow_host_factor = 10;
  for (bool flow_level : {false, true}) { // (the flow-level network cancels what a killed attempt waited on)
    p.speculative = false;
    auto plain = simulate(jobs, p, "fifo", 7, flow_level);
    p.speculative = true;
    auto spec = simulate(jobs, p, "fifo", 7, flow_level);
    EXPECT_EQ(plain["speculative_attempts"], 0);
    EXPECT_EQ(spec["finished"], 1);
    EXPECT_GT(spec["speculative_attempts"].get<double>(), 0);
    EXPECT_GT(spec["killed_attempts"].get<double>(), 0);
    EXPECT_LT(spec["mean_jct_s"].get<double>(), 0.8 * plain["mean_jct_s"].get<double>()) << flow_level;
  }
}

TEST(MapReduceSim, SameSeedSameResult)
{
  auto layout = cs::ClusterLayout::of(cluster().topology);
  std::mt19937_64 rng(4);
  std::vector<cs::MapReduceJob> jobs{job(layout, 6, 2, 64e6, 100e6, 10e6, 0, rng),
                                     job(layout, 6, 2, 64e6, 100e6, 10e6, 1, rng)};
  cs::MapReduceParams p;
  EXPECT_EQ(simulate(jobs, p, "pna", 9).dump(), simulate(jobs, p, "pna", 9).dump());
  EXPECT_EQ(simulate(jobs, p, "pna", 9, true).dump(), simulate(jobs, p, "pna", 9, true).dump());
}

TEST(MapReduceSim, FlowLevelNetworkMovesEveryByteAndTracksSimgrid)
{
  auto layout = cs::ClusterLayout::of(cluster().topology);
  std::mt19937_64 rng(3);
  std::vector<cs::MapReduceJob> jobs{job(layout, 8, 3, 64e6, 300e6, 30e6, 0, rng),
                                     job(layout, 4, 2, 64e6, 100e6, 10e6, 2, rng)};
  cs::MapReduceParams p;
  p.containers_per_host = 2;
  auto sg = simulate(jobs, p);
  auto fl = simulate(jobs, p, "capacity", 1, true);
  EXPECT_EQ(fl["finished"], 2);
  EXPECT_NEAR(fl["map_read_bytes"].get<double>(), 12 * 64e6, 12);
  EXPECT_NEAR(fl["shuffle_bytes"].get<double>(), 400e6, 10);
  // Few flows at a time, each limited by one host link or disk: the two networks should nearly agree.
  for (const char* k : {"mean_jct_s", "makespan_s"})
    EXPECT_NEAR(fl[k].get<double>() / sg[k].get<double>(), 1.0, 0.05) << k << ": " << sg[k] << " vs " << fl[k];
}

} // namespace
