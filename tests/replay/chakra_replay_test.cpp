// Chakra replay: the graph keeps each thread's and stream's order and the data dependencies, both forms of one
// trace replay alike on both backends, a collective without a measured time is priced by the tuner, a faster GPU
// shortens the step, and a scenario over a bad trace is exit 2.
#include "models/collectives/collective_model.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/isolated_run.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"
#include "workloads/replay/chakra_graph.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

using cs::testing::src;

nlohmann::json chakra_report(const std::string& scenario, const std::string& args)
{
  static int n = 0;
  const fs::path dir = fs::temp_directory_path() / ("cs_cr_" + std::to_string(::getpid()) + "_" + std::to_string(++n));
  auto r = cs::testing::run_clustersim("run " + scenario + " --quiet --out " + dir.string() + " " + args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  std::ifstream in(dir / "report.json");
  auto out = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(dir);
  return out.is_discarded() ? nlohmann::json::object() : out;
}

double chakra_step(const nlohmann::json& r) { return r["metrics"].value("iteration_time_s", -1.0); }

cs::PlatformSpec platform(int nodes, int gpus_per_node)
{
  cs::ClusterParams c;
  c.device = "a100-sxm4-40gb";
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.network.nics_per_node = 1;
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find(c.device));
}

cs::ChakraNode op(std::uint64_t id, double seconds, std::vector<std::uint64_t> deps, bool cpu, long long tid)
{
  cs::ChakraNode n;
  n.id = id;
  n.name = "op" + std::to_string(id);
  n.duration = seconds;
  n.deps = std::move(deps);
  n.cpu = cpu;
  n.tid = tid;
  return n;
}

} // namespace

TEST(ChakraReplay, ThreadsAndStreamsRunInOrderAndDependenciesHold)
{
  // CPU thread 1: a (1 ms), then b (1 ms); kernel k (5 ms, stream 7) after a, kernel m (2 ms, stream 7) after b.
  // m needs b (done at 2 ms) but follows k on its stream: 1 + 5 + 2 = 8 ms.
  cs::ChakraTrace t;
  t.file = "synthetic";
  t.nodes = {op(1, 1e-3, {}, true, 1), op(2, 1e-3, {1}, true, 1), op(3, 5e-3, {1}, false, 7),
             op(4, 2e-3, {2}, false, 7)};
  const cs::PlatformSpec p = platform(1, 2);
  cs::ChakraReplayOptions o;
  o.from = o.to = cs::DeviceCatalog::builtin().find("a100-sxm4-40gb");
  o.platform = &p;
  const cs::ChakraReplay r = cs::build_chakra_replay(t, o);
  EXPECT_EQ(r.streams, 2);
  EXPECT_EQ(r.cpu_ops, 2);
  EXPECT_EQ(r.kernels, 2);
  EXPECT_NEAR(cs::run_analytical(r.graph, p).makespan, 8e-3, 1e-9); // m waits for k on stream 7, not just for b
  EXPECT_NEAR(r.recorded_gpu_s, 7e-3, 1e-12);
  EXPECT_LT(r.recorded_span_s, 0); // no start times
}

TEST(ChakraReplay, ATraceWithStartTimesGivesItsRecordedStep)
{
  // A CPU op launches two kernels on one stream; recorded 10-11 ms, 11-14 ms, 14-16 ms: a 6 ms step, which the
  // replay gives back on the recorded GPU.
  cs::ChakraTrace t;
  t.file = "synthetic";
  t.nodes = {op(1, 1e-3, {}, true, 1), op(2, 3e-3, {1}, false, 7), op(3, 2e-3, {1}, false, 7)};
  t.nodes[0].start = 10e-3;
  t.nodes[1].start = 11e-3;
  t.nodes[2].start = 14e-3;
  const cs::PlatformSpec p = platform(1, 2);
  cs::ChakraReplayOptions o;
  o.from = o.to = cs::DeviceCatalog::builtin().find("a100-sxm4-40gb");
  o.platform = &p;
  const cs::ChakraReplay r = cs::build_chakra_replay(t, o);
  EXPECT_NEAR(r.recorded_span_s, 6e-3, 1e-12);
  EXPECT_NEAR(cs::run_analytical(r.graph, p).makespan, r.recorded_span_s, 1e-9);
}

TEST(ChakraReplay, ACollectiveWithoutAMeasuredTimeIsPricedByTheTuner)
{
  cs::ChakraTrace t;
  t.file = "synthetic";
  cs::ChakraNode c = op(1, 0, {}, false, -1);
  c.type = cs::ChakraNode::COLLECTIVE;
  c.comm_type = 0;
  c.comm_bytes = 1 << 20;
  t.nodes = {c};
  const cs::PlatformSpec p = platform(1, 4);
  cs::ChakraReplayOptions o;
  o.from = o.to = cs::DeviceCatalog::builtin().find("a100-sxm4-40gb");
  o.platform = &p;
  o.ranks = 4;
  const cs::ChakraReplay r = cs::build_chakra_replay(t, o);
  EXPECT_EQ(r.modeled_collectives, 1);
  const double expected =
      cs::choose_collective("all-reduce", "auto", 1 << 20, cs::group_shape(p, {0, 1, 2, 3})).seconds;
  EXPECT_GT(expected, 0);
  EXPECT_NEAR(cs::run_analytical(r.graph, p).makespan, expected, 1e-12);
  // The same through the CLI on ASTRA-sim's 4-rank trace.
  const fs::path scenario = fs::temp_directory_path() / ("cs_cr_astra_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(scenario)
      << "name: astra\ncluster: {device: a100-sxm4-40gb, nodes: 1, gpus_per_node: 4, network: {nics_per_node: 1}}\n"
         "workload:\n  kind: chakra-replay\n  execution_trace: "
      << src("traces/samples/chakra/astra-sim-all_reduce-4npus_1MB/all_reduce.0.et") << "\n";
  const auto rep = chakra_report(scenario.string(), "");
  fs::remove(scenario);
  EXPECT_NEAR(chakra_step(rep), expected, 1e-9);
  EXPECT_EQ(rep["breakdown"].value("modeled_collectives", -1.0), 1.0);
}

TEST(ChakraReplay, ASendOrReceiveWithASizeIsPricedOnTheNetwork)
{
  // Once 0 s: a send of 64 MiB to rank 5 (on the second node) and a receive of 1 MiB from rank 1, no durations.
  const fs::path trace = fs::temp_directory_path() / ("cs_cr_p2p_" + std::to_string(::getpid()) + ".json");
  std::ofstream(trace) << R"({"workload_graph": [
    {"Id": 1, "Name": "send", "NodeType": 5, "comm_size": 67108864, "comm_dst": 5, "data_deps": []},
    {"Id": 2, "Name": "recv", "NodeType": 6, "comm_size": 1048576, "comm_src": 1, "data_deps": [1]}]})";
  cs::ChakraTrace t = cs::read_chakra(trace.string());
  fs::remove(trace);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes[0].comm_dst, 5);
  EXPECT_EQ(t.nodes[1].comm_src, 1);
  const cs::PlatformSpec p = platform(2, 4);
  cs::ChakraReplayOptions o;
  o.from = o.to = cs::DeviceCatalog::builtin().find("a100-sxm4-40gb");
  o.platform = &p;
  o.ranks = 8;
  const cs::ChakraReplay r = cs::build_chakra_replay(t, o);
  EXPECT_EQ(r.modeled_collectives, 2);
  const double send = cs::choose_collective("p2p", "auto", 67108864, cs::group_shape(p, {0, 5})).seconds;
  const double recv = cs::choose_collective("p2p", "auto", 1048576, cs::group_shape(p, {0, 1})).seconds;
  EXPECT_GT(send, 67108864 / 100e9); // across nodes: no faster than a 100 GB/s NIC
  EXPECT_GT(recv, 0);
  EXPECT_NEAR(cs::run_analytical(r.graph, p).makespan, send + recv, 1e-12);
}

TEST(ChakraReplay, BothFormsAndBothBackendsAgreeAndAFasterGpuIsFaster)
{
  const std::string scenario = src("scenarios/chakra-replay.yaml");
  const auto et = chakra_report(scenario, "");
  const double recorded = chakra_step(et);
  // The step is paced by the compute stream (292.8 ms of kernels) with the NCCL kernels beside it.
  EXPECT_GT(recorded, 0.2928);
  EXPECT_LT(recorded, et["breakdown"].value("recorded_gpu_s", 0.0) + et["breakdown"].value("recorded_cpu_s", 0.0));
  EXPECT_EQ(et["breakdown"].value("kernels", 0.0), 1209.0);
  EXPECT_EQ(et["breakdown"].value("collectives", 0.0), 7.0);
  EXPECT_EQ(et["breakdown"].value("modeled_collectives", -1.0), 0.0); // the recorded cluster: as measured
  EXPECT_NEAR(
      chakra_step(chakra_report(scenario, "--set workload.execution_trace=../traces/samples/chakra/chakra.0.json.gz")),
      recorded, 1e-3 * recorded);
  EXPECT_NEAR(chakra_step(chakra_report(scenario, "--backend simgrid")), recorded, 1e-3 * recorded);
  const double h100 =
      chakra_step(chakra_report(scenario, "--set cluster.device=h100-sxm5 --set workload.from_device=a100-sxm4-40gb"));
  EXPECT_LT(h100, 0.6 * recorded);
  EXPECT_GT(h100, 0.2 * recorded);
}

TEST(ChakraReplay, BadTracesAndSettingsAreExit2)
{
  const fs::path bad = fs::temp_directory_path() / ("cs_cr_bad_" + std::to_string(::getpid()) + ".et");
  std::ofstream(bad, std::ios::binary) << std::string("\x40garbage", 8);
  const fs::path scenario = fs::temp_directory_path() / ("cs_cr_bad_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(scenario) << "name: bad\ncluster: {device: a100-sxm4-40gb, nodes: 1, gpus_per_node: 8}\n"
                             "workload:\n  kind: chakra-replay\n  execution_trace: "
                          << bad.string() << "\n";
  const fs::path out = fs::temp_directory_path() / ("cs_cr_out_" + std::to_string(::getpid()));
  auto r = cs::testing::run_clustersim("run " + scenario.string() + " --quiet --out " + out.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(bad.string() + ":1:1: message 0 at byte 0"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "report.json"));
  r = cs::testing::run_clustersim("run " + src("scenarios/chakra-replay.yaml") +
                                  " --quiet --set workload.ranks=64 --out " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("64 ranks need as many GPUs"), std::string::npos) << r.err;
  // The JSON form says it ran on 8 GPUs: a 4-GPU cluster is refused at the trace's key unless ranks is given.
  std::ofstream(scenario) << "name: bad\ncluster: {device: a100-sxm4-40gb, nodes: 1, gpus_per_node: 4, network: "
                             "{nics_per_node: 1}}\nworkload:\n  kind: chakra-replay\n  execution_trace: "
                          << src("traces/samples/chakra/small_chakra.0.json") << "\n";
  r = cs::testing::run_clustersim("run " + scenario.string() + " --quiet --out " + out.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(scenario.string() + ":5:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the trace ran on 8 GPUs and the cluster has 4"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "report.json"));
  fs::remove(bad);
  fs::remove(scenario);
  fs::remove_all(out);
}

TEST(ChakraReplay, TheTraceCommandSummarisesBothFormsAndRefusesACycle)
{
  auto r = cs::testing::run_clustersim("trace " + src("traces/samples/chakra/chakra.0.et.gz"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(chakra protobuf, schema 1.0.1): 3664 nodes: 2448 CPU ops"), std::string::npos) << r.out;
  r = cs::testing::run_clustersim("trace " + src("traces/samples/chakra/chakra.0.json.gz"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(chakra json): 3664 nodes"), std::string::npos) << r.out;
  const fs::path cycle = fs::temp_directory_path() / ("cs_cr_cycle_" + std::to_string(::getpid()) + ".json");
  std::ofstream(cycle) << R"({"workload_graph": [{"Id": 1, "data_deps": [2]}, {"Id": 2, "data_deps": [1]}]})";
  r = cs::testing::run_clustersim("trace " + cycle.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("form a cycle"), std::string::npos) << r.err;
  fs::remove(cycle);
}
