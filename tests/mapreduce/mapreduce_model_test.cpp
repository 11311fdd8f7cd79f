// HDFS placement, the topology cost model and the workload builder.
#include "models/dataflow/hdfs_placement.hpp"
#include "models/dataflow/topology_cost.hpp"
#include "models/devices/device_catalog.hpp"
#include "platform/platform_spec.hpp"
#include "workloads/mapreduce/mapreduce_workload.hpp"

#include <gtest/gtest.h>
#include <set>

namespace {

cs::PlatformSpec cpu_cluster(int racks, int hosts_per_rack, int racks_per_agg)
{
  cs::ClusterParams c;
  c.device = "cpu-node";
  c.racks = racks;
  c.hosts_per_rack = hosts_per_rack;
  c.network.kind = cs::NetworkKind::TREE;
  c.network.racks_per_agg = racks_per_agg;
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("cpu-node"));
}

TEST(HdfsPlacement, FollowsTheDefaultPolicy)
{
  auto p = cpu_cluster(4, 5, 2);
  auto layout = cs::ClusterLayout::of(p.topology);
  ASSERT_EQ(layout.hosts(), 20);
  ASSERT_EQ(layout.racks(), 4);
  std::mt19937_64 rng(7);
  std::set<int> first_replicas;
  for (int b = 0; b < 500; ++b) {
    const int writer = b % 3 == 0 ? 7 : -1;
    auto r = cs::place_block(layout, writer, 3, rng);
    ASSERT_EQ(r.size(), 3u);
    if (writer >= 0) {
      EXPECT_EQ(r[0], writer);
    }
    first_replicas.insert(r[0]);
    EXPECT_NE(layout.rack_of[r[1]], layout.rack_of[r[0]]) << "replica 2 goes off the writer's rack";
    EXPECT_EQ(layout.rack_of[r[2]], layout.rack_of[r[1]]) << "replica 3 shares replica 2's rack";
    EXPECT_EQ(std::set<int>(r.begin(), r.end()).size(), 3u);
  }
  EXPECT_GT(first_replicas.size(), 15u); // an outside writer spreads first replicas over the cluster
  // One rack: replicas still land on distinct hosts.
  auto one = cs::ClusterLayout::of(cpu_cluster(1, 4, 0).topology);
  auto r = cs::place_block(one, -1, 3, rng);
  EXPECT_EQ(std::set<int>(r.begin(), r.end()).size(), 3u);
}

TEST(TopologyCost, LevelsAndPolicyPaths)
{
  auto p = cpu_cluster(4, 2, 2); // hosts 0-1 rack0, 2-3 rack1 (pod 0); 4-5 rack2, 6-7 rack3 (pod 1)
  cs::TopologyCost plain(p.topology, {0, 1, 2, 4}, {});
  EXPECT_EQ(plain.level(0, 0), 0);
  EXPECT_EQ(plain.level(0, 1), 1);
  EXPECT_EQ(plain.level(0, 2), 2);
  EXPECT_EQ(plain.level(0, 7), 3);
  EXPECT_DOUBLE_EQ(plain.weight(0, 7), 4);
  EXPECT_EQ(plain.policy_hops(0, 1), 2); // host - tor - host
  EXPECT_EQ(plain.policy_hops(0, 2), 4); // via agg0
  EXPECT_EQ(plain.policy_hops(0, 7), 6); // via core
  EXPECT_FALSE(plain.has_policy());
  // Inter-rack flows must pass agg0: pod 1's rack-to-rack traffic detours through the core to agg0 and back.
  cs::TopologyCost policy(p.topology, {0, 1, 2, 4}, {"agg0"});
  EXPECT_EQ(policy.policy_hops(0, 1), 2);
  EXPECT_EQ(policy.policy_hops(0, 2), 4);
  EXPECT_EQ(policy.policy_hops(0, 7), 6);
  EXPECT_EQ(policy.policy_hops(4, 6), 8); // rack2 -> agg1 -> core -> agg0 -> core -> agg1 -> rack3
  EXPECT_THROW(cs::TopologyCost(p.topology, {0, 1, 2, 4}, {"rack0/host0"}), std::invalid_argument);
  EXPECT_THROW(cs::TopologyCost(p.topology, {0, 1, 2, 4}, {"nope"}), std::invalid_argument);
}

TEST(MapReduceWorkload, DerivesMapsReducesAndComputeFromATraceJob)
{
  cs::MapReduceParams p;
  p.block_size.value = 100;
  p.reduce_bytes_per_task.value = 40;
  p.max_reduces = 3;
  p.map_rate.value = 10;
  p.reduce_rate.value = 5;
  cs::TraceJob t;
  t.input_bytes = 250;
  t.shuffle_bytes = 200;
  t.output_bytes = 30;
  auto job = cs::job_from_trace(t, p);
  ASSERT_EQ(job.maps.size(), 3u); // ceil(250 / 100)
  EXPECT_DOUBLE_EQ(job.maps[0].input_bytes, 250.0 / 3);
  EXPECT_DOUBLE_EQ(job.maps[0].compute_s, 250.0 / 3 / 10);
  EXPECT_EQ(job.reduces, 3); // ceil(200 / 40) = 5, capped at 3
  EXPECT_DOUBLE_EQ(job.reduce_compute_s[0], 200.0 / 3 / 5);
  EXPECT_DOUBLE_EQ(job.map_output_bytes(0), 200.0 / 3);
  // Recorded task times and per-map sizes win over the derived ones; a reduce count of 0 drops the shuffle.
  t.map_input_bytes = {10, 20};
  t.map_seconds = {4, -1};
  t.reduces = 0;
  job = cs::job_from_trace(t, p);
  ASSERT_EQ(job.maps.size(), 2u);
  EXPECT_DOUBLE_EQ(job.maps[0].compute_s, 4);
  EXPECT_DOUBLE_EQ(job.maps[1].compute_s, 2);
  EXPECT_EQ(job.reduces, 0);
  EXPECT_DOUBLE_EQ(job.shuffle_bytes, 0);
}

TEST(MapReduceWorkload, SyntheticJobsAreSeededAndWriterRacksHoldAReplica)
{
  auto platform = cpu_cluster(4, 5, 2);
  auto layout = cs::ClusterLayout::of(platform.topology);
  cs::MapReduceParams p;
  p.synthetic.jobs = 5;
  p.writer_racks = 1;
  auto a = cs::build_mapreduce_workload(p, layout, ".", 3);
  auto b = cs::build_mapreduce_workload(p, layout, ".", 3);
  auto c = cs::build_mapreduce_workload(p, layout, ".", 4);
  ASSERT_EQ(a.jobs.size(), 5u);
  EXPECT_EQ(a.jobs[0].submit_s, 0);
  bool differs = false;
  for (std::size_t j = 0; j < 5; ++j) {
    EXPECT_EQ(a.jobs[j].input_bytes, b.jobs[j].input_bytes);
    differs = differs || a.jobs[j].input_bytes != c.jobs[j].input_bytes;
    std::set<int> writer_racks;
    for (const auto& m : a.jobs[j].maps)
      writer_racks.insert(layout.rack_of[m.replicas[0]]);
    EXPECT_EQ(writer_racks.size(), 1u) << "every block's first replica is in the dataset's writer rack";
  }
  EXPECT_TRUE(differs);
}

TEST(MapReduceWorkload, ARunThatWillTakeMinutesOnSimgridIsSaidBeforeItStarts)
{
  // Once nothing warned before a replay that took 525-660 s on simgrid: the warning counts tasks and shuffle flows.
  auto platform = cpu_cluster(4, 5, 2);
  auto layout = cs::ClusterLayout::of(platform.topology);
  cs::MapReduceWorkload w;
  cs::MapReduceJob job;
  job.maps.resize(400);
  job.reduces = 400; // 800 tasks and 160,000 flows: under the bound
  w.jobs.push_back(job);
  EXPECT_EQ(cs::simgrid_duration_warning(w), "");
  w.jobs.push_back(job); // 320,000 flows
  EXPECT_NE(cs::simgrid_duration_warning(w).find("1600 map and reduce tasks and 320000 shuffle flows"),
            std::string::npos)
      << cs::simgrid_duration_warning(w);
  // The HiT paper's scenario (80 jobs) is far below it.
  cs::MapReduceParams p;
  p.synthetic.jobs = 80;
  EXPECT_EQ(cs::simgrid_duration_warning(cs::build_mapreduce_workload(p, layout, ".", 1)), "");
}

TEST(MapReduceWorkload, TraceWindowAndHostNames)
{
  auto layout = cs::ClusterLayout::of(cpu_cluster(2, 3, 0).topology);
  cs::MapReduceParams p;
  p.trace.format = "rumen";
  p.trace.file = std::string(CS_SOURCE_DIR) + "/traces/samples/hadoop/2jobs2min-rumen-jh.json";
  p.trace.max_jobs = 1;
  auto w = cs::build_mapreduce_workload(p, layout, "/", 1);
  ASSERT_EQ(w.jobs.size(), 1u);
  EXPECT_EQ(w.outside_window, 1);
  EXPECT_EQ(w.jobs[0].maps.size(), 96u);
  for (const auto& m : w.jobs[0].maps) {
    ASSERT_FALSE(m.replicas.empty()); // the trace's preferred hosts, dealt onto this cluster
    for (int h : m.replicas)
      EXPECT_LT(h, 6);
  }
  p.trace.start.value = 1e9; // past the end
  EXPECT_THROW(cs::build_mapreduce_workload(p, layout, "/", 1), std::invalid_argument);
}

} // namespace
