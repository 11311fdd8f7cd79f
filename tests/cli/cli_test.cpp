#include "models/transformer/framework.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/cli/run_cli.hpp"

#include <nlohmann/json.hpp>

#include "tests/test_models.hpp"
#include "tests/test_support.hpp"
#include <array>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

using cs::testing::clustersim;
using cs::testing::fresh_dir;
using cs::testing::src;

using Result = cs::testing::CliResult;
nlohmann::ordered_json read_ordered_json(const fs::path& p)
{
  std::ifstream in(p);
  return nlohmann::ordered_json::parse(in);
}

// `clustersim run SCENARIO --quiet --backend analytical ARGS` into a fresh folder: its report (null if it failed).
nlohmann::ordered_json analytical_report(const std::string& name, const std::string& scenario, const std::string& args)
{
  const fs::path out = fresh_dir(name);
  const auto r =
      clustersim("run " + src(scenario) + " --quiet --backend analytical " + args + " --out " + out.string());
  EXPECT_EQ(r.code, 0) << r.err;
  if (r.code != 0)
    return nullptr;
  auto report = read_ordered_json(out / "report.json");
  fs::remove_all(out);
  return report;
}

// A plans.csv's header and its first plan's row.
std::pair<std::string, std::string> plans_head(const fs::path& csv_path)
{
  std::ifstream csv(csv_path);
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  return {header, first};
}

} // namespace

TEST(Cli, HelpVersionAndLists)
{
  auto help = clustersim("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("run"), std::string::npos);
  EXPECT_NE(help.out.find("validate"), std::string::npos);
  auto version = clustersim("--version");
  EXPECT_EQ(version.code, 0);
  EXPECT_NE(version.out.find("clustersim 0."), std::string::npos);
  auto policies = clustersim("list policies");
  EXPECT_EQ(policies.code, 0);
  EXPECT_NE(policies.out.find("ring-allreduce"), std::string::npos);
  EXPECT_NE(policies.out.find("sync:"), std::string::npos);
  // A model's pieces, under the keys that choose them: every registered dispatcher among them.
  auto kinds = clustersim("list kinds");
  EXPECT_EQ(kinds.code, 0);
  for (const char* k : {"attention kinds (a block workload.model.<kind>", "workload.model.mlp:", "workload.model.fp8:",
                        "workload.model.moe.dispatcher:", "hybridep", "deepep", "tensorwise", "swiglu", "mla",
                        "workload.framework:", "torch-eager", "workload.framework.tp_overlap (named userbuffers",
                        "ub_cfg_h100_h8192_tp4_mbs1_seqlen4096\n      proj_fprop pipeline 24+, fc2_fprop pipeline 16+"})
    EXPECT_NE(kinds.out.find(k), std::string::npos) << k << "\n" << kinds.out;
  auto devices = clustersim("list devices");
  EXPECT_EQ(devices.code, 0);
  for (const char* d : {"v100-sxm2", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5", "h200-sxm", "cpu-node"})
    EXPECT_NE(devices.out.find(d), std::string::npos) << d;
  // Each GPU lists the dtypes it has units for (a V100 once showed "bf16 0.0 TFLOP/s").
  const std::string v100 = devices.out.substr(devices.out.find("v100-sxm2"));
  const std::string line = v100.substr(0, v100.find('\n'));
  EXPECT_NE(line.find("fp16 125.0"), std::string::npos) << line;
  EXPECT_EQ(line.find("bf16"), std::string::npos) << line;
  // Every metric a run can report, with its unit and meaning, from the declarations.
  auto metrics = clustersim("list metrics");
  EXPECT_EQ(metrics.code, 0);
  for (const char* m : {"iteration_time_s", "tokens_per_s", "busbw_gbps", "mean_jct_s", "cache_hit_rate",
                        "alltoall_exposed_fraction", "step_time_error", "gpu_utilization", "updates_per_s"})
    EXPECT_NE(metrics.out.find(m), std::string::npos) << m;
  EXPECT_NE(metrics.out.find("fits_in_memory                 true/false"), std::string::npos) << metrics.out;
}

TEST(Cli, ListKindsSaysWhatEachBuiltInFrameworkIs)
{
  // Each profile carries its own line, so a profile added to builtin_frameworks() is listed with what it is.
  const auto kinds = clustersim("list kinds");
  ASSERT_EQ(kinds.code, 0);
  for (const auto& p : cs::builtin_frameworks()) {
    ASSERT_FALSE(p.description.empty()) << p.name;
    EXPECT_NE(kinds.out.find(fmt::format("  {:<22} {}\n", p.name, p.description)), std::string::npos) << p.name << "\n"
                                                                                                      << kinds.out;
  }
}

TEST(Cli, BadFlagsExitTwo)
{
  auto r = clustersim("run");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("<command line>:1:1: ", 0), 0u) << r.err;
  EXPECT_EQ(clustersim("list gizmos").code, 2);
  EXPECT_EQ(clustersim("frobnicate").code, 2);
}

TEST(Cli, RunWritesReportResolvedScenarioAndTrace)
{
  fs::path out = fresh_dir("run");
  auto r =
      clustersim("run " + src("scenarios/quickstart.yaml") + " --backend analytical --trace --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("iteration"), std::string::npos);
  auto report = read_ordered_json(out / "report.json");
  std::vector<std::string> keys;
  for (auto it = report.begin(); it != report.end(); ++it)
    keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"tool", "version", "scenario", "seed", "backend", "metrics", "breakdown",
                                            "wall_time_s"}));
  EXPECT_EQ(report["tool"], "clustersim");
  EXPECT_EQ(report["scenario"], "quickstart");
  EXPECT_EQ(report["backend"], "analytical");
  for (const char* m : {"iteration_time_s", "throughput_samples_per_s", "network_bytes"})
    EXPECT_GT(report["metrics"][m].get<double>(), 0) << m;
  for (const char* b : {"compute_s", "communication_s", "exposed_communication_s"})
    EXPECT_TRUE(report["breakdown"].contains(b)) << b;
  EXPECT_TRUE(fs::exists(out / "scenario.resolved.yaml"));
  std::ifstream resolved(out / "scenario.resolved.yaml");
  std::string text((std::istreambuf_iterator<char>(resolved)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("backend: analytical"), std::string::npos);
  EXPECT_EQ(text.find("!cs-set"), std::string::npos);

  auto trace = read_ordered_json(out / "trace.json");
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::set<int> pids;
  int complete = 0, zero = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      ++complete;
      zero += e["dur"].get<double>() == 0 && e["cat"] == "gradient-sync";
      pids.insert(e["pid"].get<int>());
    }
    // A collective's barrier channel once showed as a thread "comm1000" of zero-length all-reduces.
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      EXPECT_EQ(e["args"]["name"].get<std::string>().find("comm1000"), std::string::npos) << e.dump();
    }
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1})); // one process per node
  EXPECT_EQ(zero, 0);
  // Every task but the zero-length joins and barriers.
  EXPECT_LT(complete, report["metrics"]["task_count"].get<int>());
  EXPECT_GT(complete, report["metrics"]["task_count"].get<int>() * 9 / 10);
  EXPECT_FALSE(trace.contains("otherData")); // data parallel, every replica simulated: nothing left out
  fs::remove_all(out);
}

TEST(Cli, TheTraceSaysItShowsTpRankZero)
{
  // The graph holds TP rank 0 of each tensor-parallel group: the trace says so, with the trace and on every node.
  const fs::path out = fresh_dir("trace_tp");
  auto r =
      clustersim("run " + src("scenarios/reference/megatron-18.4b.yaml") + " --quiet --trace --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  auto trace = read_ordered_json(out / "trace.json");
  ASSERT_TRUE(trace.contains("otherData")) << trace.dump().substr(0, 200);
  EXPECT_NE(trace["otherData"]["note"].get<std::string>().find("TP rank 0 of its tensor-parallel group of 8"),
            std::string::npos);
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") {
      EXPECT_NE(e["args"]["name"].get<std::string>().find("(TP rank 0 of each group)"), std::string::npos);
    }
  fs::remove_all(out);
}

TEST(Cli, TheSummarySaysWhatTheFabricDid)
{
  // A simgrid check on the default fabric agrees with analytical by construction, and an oversubscribed level
  // under which every node sits changes nothing: the cluster line says both.
  const fs::path out = fresh_dir("fabric");
  auto plain = clustersim("run " + src("scenarios/quickstart.yaml") + " --backend analytical --out " + out.string());
  EXPECT_NE(plain.out.find("fat-tree network, non-blocking, ideal model"), std::string::npos) << plain.out;
  auto over =
      clustersim("run " + src("scenarios/quickstart.yaml") +
                 " --backend analytical --set 'cluster.network.levels[0].oversubscription=4' --out " + out.string());
  EXPECT_NE(over.out.find("4:1 above the leaves (no flow crossed it)"), std::string::npos) << over.out;
  auto crossed = clustersim("run " + src("scenarios/quickstart.yaml") +
                            " --backend analytical --set cluster.nodes=8 --set workload.parallel.dp=64 --set "
                            "workload.batch.global=1024 --set 'cluster.network.levels[0].oversubscription=4' --out " +
                            out.string());
  EXPECT_NE(crossed.out.find("4:1 above the leaves, ideal model"), std::string::npos) << crossed.out;
  fs::remove_all(out);
}

TEST(Cli, QuietSilencesTheSummary)
{
  fs::path out = fresh_dir("quiet");
  auto r =
      clustersim("run " + src("scenarios/quickstart.yaml") + " --backend analytical --quiet --out " + out.string());
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  fs::remove_all(out);
}

TEST(Cli, BadScenarioExitsTwoAndWritesNothing)
{
  fs::path out = fresh_dir("bad");
  auto r = clustersim("run " + src("scenarios/quickstart.yaml") + " --set cluster.device=h1000 --out " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("--set:1:1: cluster.device=h1000: unknown device 'h1000'", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_FALSE(fs::exists(out));
  auto missing = clustersim("run /nonexistent.yaml --out " + out.string());
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "/nonexistent.yaml:0:0: cannot open scenario file: no such file\n");
  EXPECT_FALSE(fs::exists(out));
  auto bad_backend = clustersim("run " + src("scenarios/quickstart.yaml") + " --backend quantum --out " + out.string());
  EXPECT_EQ(bad_backend.code, 2);
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, ValidateChecksWithoutRunning)
{
  auto ok = clustersim("validate " + src("scenarios/quickstart.yaml"));
  EXPECT_EQ(ok.code, 0);
  EXPECT_EQ(ok.out, "ok: quickstart (" + src("scenarios/quickstart.yaml") + ")\n");
  auto bad = clustersim("validate " + src("scenarios/quickstart.yaml") + " --set workload.batch.micro=0");
  EXPECT_EQ(bad.code, 2);
  auto keys = clustersim("validate --keys");
  EXPECT_EQ(keys.code, 0);
  EXPECT_NE(keys.out.find("cluster.network.nic_bandwidth"), std::string::npos);
}

TEST(Cli, ReportsAreByteIdenticalAcrossRunsOnBothBackends)
{
  for (const char* backend : {"analytical", "simgrid"}) {
    std::string texts[2];
    for (int i = 0; i < 2; ++i) {
      fs::path out = fresh_dir(std::string("det") + backend + std::to_string(i));
      auto r = clustersim("run " + src("scenarios/quickstart.yaml") + " --quiet --backend " + backend +
                          " --set workload.iterations=1 --out " + out.string());
      ASSERT_EQ(r.code, 0) << r.err;
      auto j = read_ordered_json(out / "report.json");
      j.erase("wall_time_s");
      texts[i] = j.dump(2);
      fs::remove_all(out);
    }
    EXPECT_EQ(texts[0], texts[1]) << backend;
  }
}

TEST(Cli, EveryExampleScenarioRuns)
{
  int count = 0;
  for (const auto& dir : {src("scenarios"), src("scenarios/reference")}) {
    if (!fs::exists(dir))
      continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".yaml")
        continue;
      fs::path out = fresh_dir("example" + std::to_string(count++));
      auto r = clustersim("run " + entry.path().string() + " --quiet --out " + out.string());
      EXPECT_EQ(r.code, 0) << entry.path() << ": " << r.err;
      EXPECT_TRUE(fs::exists(out / "report.json")) << entry.path();
      fs::remove_all(out);
    }
  }
  EXPECT_GE(count, 1);
}

TEST(Cli, CollectiveSweepWritesCsvAndRejectsBadInput)
{
  fs::path out = fresh_dir("collective");
  auto r =
      clustersim("run " + src("scenarios/reference/nccl-h100-ring.yaml") +
                 " --backend analytical --set workload.collective.min_bytes=0 --set workload.collective.max_bytes=1MiB"
                 " --out " +
                 out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("#wrong"), std::string::npos); // nccl-tests' column layout
  std::ifstream csv(out / "collective.csv");
  std::string header, zero;
  std::getline(csv, header);
  std::getline(csv, zero);
  EXPECT_EQ(header, "size_bytes,time_s,algbw_gbps,busbw_gbps,algorithm,protocol");
  EXPECT_EQ(zero.rfind("0,", 0), 0u); // a zero-byte row is valid and costs latency only
  auto report = read_ordered_json(out / "report.json");
  EXPECT_GT(report["metrics"]["busbw_gbps"].get<double>(), 0);
  EXPECT_GT(report["breakdown"]["bytes_nvlink"].get<double>(), 0);
  // An idle NVSwitch node: the analytical backend prices the ring sizes by their closed forms (the 0-byte row and
  // the LL sizes too), and says so.
  EXPECT_GT(report["breakdown"]["closed_form_sizes"].get<double>(), 0);
  EXPECT_NE(r.out.find("by closed form"), std::string::npos);
  fs::remove_all(out);
  auto flows =
      clustersim("run " + src("scenarios/reference/nccl-h100-ring.yaml") +
                 " --backend analytical --quiet --set workload.collective.pricing=flows --out " + out.string());
  ASSERT_EQ(flows.code, 0) << flows.err;
  EXPECT_EQ(read_ordered_json(out / "report.json")["breakdown"]["closed_form_sizes"].get<double>(), 0);
  fs::remove_all(out);
  const std::string base = "run " + src("scenarios/reference/nccl-h100-ring.yaml") + " --out " + out.string();
  for (const char* bad :
       {" --set workload.collective.ranks=16", " --set workload.collective.algorithm=bruck",
        " --set workload.collective.max_bytes=-1GiB", " --set workload.collective.op=all-to-all",
        " --set cluster.device=a100-sxm4-80gb --set cluster.intra_node.nvls=true",
        " --set cluster.network.background=[{tier: warp}]", " --set workload.collective.pricing=exact"}) {
    auto e = clustersim(base + bad);
    EXPECT_EQ(e.code, 2) << bad << ": " << e.err;
    EXPECT_EQ(std::count(e.err.begin(), e.err.end(), '\n'), 1) << bad << ": " << e.err;
    EXPECT_FALSE(fs::exists(out)) << bad;
  }
}

TEST(Cli, AModelThatDoesNotFitIsReportedNotACrash)
{
  fs::path out = fresh_dir("oom");
  auto r = clustersim("run " + src("scenarios/quickstart.yaml") +
                      " --backend analytical --set workload.batch.micro=32 --set workload.batch.global=512 --out " +
                      out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
  auto report = read_ordered_json(out / "report.json");
  EXPECT_FALSE(report["metrics"]["fits_in_memory"].get<bool>());
  EXPECT_GT(report["metrics"]["peak_memory_bytes"].get<double>(),
            report["metrics"]["memory_capacity_bytes"].get<double>());
  EXPECT_TRUE(report["breakdown"].contains("memory_activations_bytes"));
  fs::remove_all(out);
}

TEST(Cli, PipelineTrainingReportsItsBubbleOnBothBackends)
{
  double iteration[2] = {0, 0};
  int i = 0;
  for (const char* backend : {"analytical", "simgrid"}) {
    fs::path out = fresh_dir(std::string("pipe") + backend);
    auto r = clustersim("run " + src("scenarios/gpt-pipeline.yaml") + " --quiet --backend " + backend +
                        " --set workload.iterations=1 --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    auto report = read_ordered_json(out / "report.json");
    EXPECT_GT(report["metrics"]["bubble_fraction"].get<double>(), 0.0);
    EXPECT_GT(report["metrics"]["mfu"].get<double>(), 0.0);
    EXPECT_LT(report["metrics"]["mfu"].get<double>(), 1.0);
    for (const char* k : {"stage0_busy_s", "stage3_idle_s"})
      EXPECT_GT(report["breakdown"][k].get<double>(), 0.0) << k;
    EXPECT_TRUE(report["metrics"]["fits_in_memory"].get<bool>());
    iteration[i++] = report["metrics"]["iteration_time_s"].get<double>();
    fs::remove_all(out);
  }
  // Activations and their gradients share NVLink ports only in passing: the backends stay within 5%.
  EXPECT_NEAR(iteration[0] / iteration[1], 1.0, 0.05);
}

TEST(Cli, TensorAndPipelineParallelismTogether)
{
  double iteration[2] = {0, 0};
  int i = 0;
  for (const char* backend : {"analytical", "simgrid"}) {
    fs::path out = fresh_dir(std::string("tppp") + backend);
    auto r = clustersim(
        "run " + src("scenarios/gpt-pipeline.yaml") + " --quiet --backend " + backend +
        " --set workload.iterations=1 --set workload.parallel.tp=2 --set workload.parallel.dp=2 --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    auto report = read_ordered_json(out / "report.json");
    EXPECT_GT(report["breakdown"]["tp_communication_s"].get<double>(), 0.0);
    EXPECT_GT(report["breakdown"]["stage3_busy_s"].get<double>(), 0.0);
    iteration[i++] = report["metrics"]["iteration_time_s"].get<double>();
    fs::remove_all(out);
  }
  EXPECT_NEAR(iteration[0] / iteration[1], 1.0, 0.05);
  // Splitting each stage over two GPUs with half the replicas: each GPU does half the work of a stage, plus the
  // TP all-reduces, so the iteration takes longer than half but no longer than the tp = 1 iteration.
  fs::path out = fresh_dir("tppp1");
  auto r = clustersim("run " + src("scenarios/gpt-pipeline.yaml") +
                      " --quiet --backend analytical --set workload.iterations=1 --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const double tp1 = read_ordered_json(out / "report.json")["metrics"]["iteration_time_s"].get<double>();
  EXPECT_GT(iteration[0], 0.5 * tp1);
  EXPECT_LT(iteration[0], 1.2 * tp1);
  fs::remove_all(out);
}

TEST(Cli, BalancedPartitionHelpsAHeavyOutputLayer)
{
  double iteration[2] = {0, 0};
  int i = 0;
  for (const char* partition : {"even", "balanced"}) {
    fs::path out = fresh_dir(std::string("part") + partition);
    auto r = clustersim("run " + src("scenarios/gpt-pipeline.yaml") +
                        " --quiet --backend analytical --set workload.iterations=1 --set workload.model.vocab=256000"
                        " --set workload.parallel.partition=" +
                        partition + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    iteration[i++] = read_ordered_json(out / "report.json")["metrics"]["iteration_time_s"].get<double>();
    fs::remove_all(out);
  }
  // The last device's per-microbatch time falls from 6 layers + head to 2 layers + head (about 0.8x); the
  // iteration gains less because the head's and embedding's large gradient sync and optimizer step do not shrink.
  EXPECT_LT(iteration[1], 0.93 * iteration[0]);
  // Layers that do not divide: an error naming the key under an even partition, fine when balanced.
  auto e = clustersim("run " + src("scenarios/gpt-pipeline.yaml") + " --set workload.model.layers=23");
  EXPECT_EQ(e.code, 2);
  EXPECT_NE(e.err.find("workload.model.layers=23: 23 layers do not divide"), std::string::npos) << e.err;
  fs::path out = fresh_dir("part23");
  auto ok = clustersim(
      "run " + src("scenarios/gpt-pipeline.yaml") +
      " --quiet --backend analytical --set workload.model.layers=23 --set workload.parallel.partition=balanced --out " +
      out.string());
  EXPECT_EQ(ok.code, 0) << ok.err;
  fs::remove_all(out);
}

TEST(Cli, TrainingTrafficIsReportedPerLinkTier)
{
  // 2 x 8 H100 under one leaf: every inter-node byte crosses two NICs and no uplink. With one node per leaf (radix 1)
  // every inter-node byte also climbs one leaf's uplink and comes down the other's.
  double nic[2] = {0, 0}, uplink[2] = {0, 0}, inter[2] = {0, 0}, busy = 0, iteration = 0;
  for (int split = 0; split < 2; ++split) {
    fs::path out = fresh_dir(std::string("tier") + std::to_string(split));
    auto r = clustersim(
        "run " + src("scenarios/quickstart.yaml") + " --quiet --backend analytical" + " --set workload.iterations=1" +
        (split ? " --set 'cluster.network.levels=[{radix: 1},{oversubscription: 1}]'" : "") + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto report = read_ordered_json(out / "report.json");
    const auto& b = report["breakdown"];
    nic[split] = b.value("bytes_nic", 0.0);
    uplink[split] = b.value("bytes_leaf_uplink", 0.0);
    inter[split] = report["metrics"]["network_bytes_inter_node"].get<double>();
    if (!split) {
      busy = b["busiest_nic_link_busy_s"].get<double>();
      iteration = report["metrics"]["iteration_time_s"].get<double>();
    }
  }
  EXPECT_NEAR(nic[0], 2 * inter[0], 1e-6 * nic[0]);
  EXPECT_EQ(uplink[0], 0.0);
  EXPECT_GT(busy, 0.0);
  EXPECT_LE(busy, iteration);
  EXPECT_NEAR(uplink[1], 2 * inter[1], 1e-6 * uplink[1]);
}

TEST(Cli, OneReplicaRunsCountTheirClosedFormsTrafficPerLinkTier)
{
  // With --replicas one every gradient all-reduce has members left out, so it is priced by its closed form and no
  // transfer stands for it: its expansion's bytes are routed over the links instead, for every replica, and its
  // busy time on the busiest NIC is the least its bytes take there.
  double nic[2] = {0, 0}, busy[2] = {0, 0};
  for (int one = 0; one < 2; ++one) {
    fs::path out = fresh_dir(std::string("tierone") + std::to_string(one));
    auto r = clustersim("run " + src("scenarios/quickstart.yaml") + " --quiet --backend analytical" +
                        " --set workload.iterations=1" + (one ? " --replicas one" : " --replicas all") + " --out " +
                        out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto report = read_ordered_json(out / "report.json");
    const auto& b = report["breakdown"];
    nic[one] = b.value("bytes_nic", 0.0);
    busy[one] = b.value("busiest_nic_link_busy_s", 0.0);
    fs::remove_all(out);
  }
  EXPECT_NEAR(nic[1], nic[0], 1e-6 * nic[0]);
  EXPECT_GT(busy[1], 0.0);
  EXPECT_LE(busy[1], busy[0]);
}

TEST(Cli, TheFrameworksReduceDtypeSizesGradientTraffic)
{
  // Data-parallel traffic is all gradient all-reduce: reducing in fp32 instead of bf16 moves twice the bytes (to
  // the rounding of buckets to whole elements).
  double bytes[2] = {0, 0};
  int i = 0;
  for (const char* dtype : {"bf16", "fp32"}) {
    fs::path out = fresh_dir(std::string("rd") + dtype);
    auto r = clustersim(
        "run " + src("scenarios/quickstart.yaml") +
        " --quiet --backend analytical --set workload.iterations=1 --set workload.framework.reduce_dtype=" + dtype +
        " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    bytes[i++] = read_ordered_json(out / "report.json")["metrics"]["network_bytes"].get<double>();
    fs::remove_all(out);
  }
  // Wire bytes include the protocol's own: the bf16 buckets (~105 MB over 16 ranks) go to LL128, whose 128-byte
  // lines carry 8 bytes of flags, the fp32 ones to Simple (0.881 / 0.958 = 0.92).
  EXPECT_NEAR(bytes[1] / (2 * bytes[0]), 0.881 / 0.958, 0.01);
}

TEST(Cli, SequenceParallelismSplitsActivationsOverTheTensorGroup)
{
  std::map<std::string, nlohmann::json> report;
  for (const char* sp : {"false", "true"})
    for (const char* backend : {"analytical", "simgrid"}) {
      fs::path out = fresh_dir(std::string("sp") + sp + backend);
      auto r = clustersim("run " + src("scenarios/quickstart.yaml") + " --quiet --backend " + backend +
                          " --set workload.iterations=1 --set workload.parallel.tp=4 --set workload.parallel.dp=4"
                          " --set workload.model.recompute=full --set workload.parallel.sequence_parallel=" +
                          sp + " --out " + out.string());
      ASSERT_EQ(r.code, 0) << r.err;
      report[std::string(sp) + backend] = read_ordered_json(out / "report.json");
      fs::remove_all(out);
    }
  // Full recomputation keeps each layer's input: 2 s b h, divided by tp under sequence parallelism. Four layers more
  // add four inputs; the loss's log-probabilities and the layer the backward reruns are the same either way.
  std::map<std::string, double> four_more;
  for (const char* sp : {"false", "true"}) {
    fs::path out = fresh_dir(std::string("sp_layers") + sp);
    auto r = clustersim("run " + src("scenarios/quickstart.yaml") +
                        " --quiet --set workload.iterations=1 --set workload.parallel.tp=4 --set workload.parallel.dp=4"
                        " --set workload.model.recompute=full --set workload.model.layers=28"
                        " --set workload.parallel.sequence_parallel=" +
                        sp + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    four_more[sp] = read_ordered_json(out / "report.json")["breakdown"]["memory_activations_bytes"].get<double>() -
                    report[std::string(sp) + "analytical"]["breakdown"]["memory_activations_bytes"].get<double>();
    fs::remove_all(out);
  }
  EXPECT_NEAR(four_more["false"], 4 * 2.0 * 2048 * 4 * 2048, 1.0);
  EXPECT_NEAR(four_more["true"] * 4, four_more["false"], 1.0);
  // Reduce-scatter + all-gather move what the all-reduce moved, and in backward each column-parallel layer gathers
  // its saved input shard again (Megatron-Core's asynchronous backward): two all-gathers more a layer, 7/6 of the six
  // all-reduces' bytes under full recomputation (the data-parallel rings here cross the nodes).
  EXPECT_NEAR(report["trueanalytical"]["metrics"]["network_bytes_intra_node"].get<double>() /
                  report["falseanalytical"]["metrics"]["network_bytes_intra_node"].get<double>(),
              7.0 / 6.0, 0.02);
  for (const char* sp : {"false", "true"})
    EXPECT_NEAR(report[std::string(sp) + "analytical"]["metrics"]["iteration_time_s"].get<double>() /
                    report[std::string(sp) + "simgrid"]["metrics"]["iteration_time_s"].get<double>(),
                1.0, 0.05)
        << sp;
  auto e = clustersim("run " + src("scenarios/quickstart.yaml") + " --set workload.parallel.sequence_parallel=true");
  EXPECT_EQ(e.code, 2);
  EXPECT_NE(e.err.find("needs tp > 1"), std::string::npos) << e.err;
}

TEST(Cli, ZeroShardsStateAndSwapsTheAllReduceForReduceScatterAndAllGather)
{
  std::map<std::string, nlohmann::json> report;
  for (const char* zero : {"0", "2", "3"})
    for (const char* backend : {"analytical", "simgrid"}) {
      fs::path out = fresh_dir(std::string("zero") + zero + backend);
      auto r =
          clustersim("run " + src("scenarios/quickstart.yaml") + " --quiet --backend " + backend +
                     " --set workload.iterations=2 --set workload.parallel.zero=" + zero + " --out " + out.string());
      ASSERT_EQ(r.code, 0) << r.err;
      report[std::string(zero) + backend] = read_ordered_json(out / "report.json");
      fs::remove_all(out);
    }
  const auto& z0 = report["0analytical"];
  const auto& z2 = report["2analytical"];
  // dp = 16: Adam state is sharded 16 ways under ZeRO-2. The gradients of the step's 4 microbatches accumulate and
  // are reduce-scattered once, so the whole buffer is resident until then: memory and traffic tell one story (the
  // gradients were once shown sharded while the traffic was ZeRO-1's).
  EXPECT_NEAR(z2["breakdown"]["memory_optimizer_bytes"].get<double>() * 16,
              z0["breakdown"]["memory_optimizer_bytes"].get<double>(), 16.0);
  EXPECT_EQ(z2["breakdown"]["memory_gradients_bytes"].get<double>(),
            z0["breakdown"]["memory_gradients_bytes"].get<double>());
  // Reduce-scatter then all-gather move what the all-reduce moved.
  EXPECT_NEAR(z2["metrics"]["network_bytes"].get<double>() / z0["metrics"]["network_bytes"].get<double>(), 1.0, 0.01);
  // DeepSpeed's ZeRO-2 reduce-scatters every microbatch and keeps only its shard: 16 ways smaller, and 4
  // reduce-scatters and an all-gather, 2.5 all-reduces' bytes.
  {
    fs::path out = fresh_dir("zero2every");
    auto r = clustersim("run " + src("scenarios/quickstart.yaml") +
                        " --quiet --backend analytical --set workload.iterations=2 --set workload.parallel.zero=2 "
                        "--set workload.framework.reduce_every_microbatch=true --out " +
                        out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto every = read_ordered_json(out / "report.json");
    EXPECT_NEAR(every["breakdown"]["memory_gradients_bytes"].get<double>() * 16,
                z0["breakdown"]["memory_gradients_bytes"].get<double>(), 16.0);
    EXPECT_NEAR(every["metrics"]["network_bytes"].get<double>() / z0["metrics"]["network_bytes"].get<double>(), 2.5,
                0.05);
    fs::remove_all(out);
  }
  // ZeRO-3 shards the weights too, and holds two gathered layers (the computing one and the prefetched next).
  const auto& z3 = report["3analytical"];
  EXPECT_NEAR(z3["breakdown"]["memory_parameters_bytes"].get<double>() * 16,
              z0["breakdown"]["memory_parameters_bytes"].get<double>(), 16.0);
  const cs::ModelParams m(cs::testing::model(24, 2048, 8192, 16, 2048, 51200, "bf16", "none")); // quickstart's model
  const double layer = cs::layer_parameters(m), embedding = cs::embedding_parameters(m);
  EXPECT_NEAR(z3["breakdown"]["memory_buffers_bytes"].get<double>() -
                  z2["breakdown"]["memory_buffers_bytes"].get<double>(),
              2 * layer * 2, 1.0);
  // Gradients are reduce-scattered (half an all-reduce's bytes); each of the 4 microbatches gathers every layer
  // twice (forward, backward) and the tied embedding once.
  const double gathered = 4 * (2 * 24 * layer + embedding) / (24 * layer + embedding);
  // (Within 2%: the gathers and the all-reduce buckets need not pick the same protocol, whose flag bytes differ.)
  EXPECT_NEAR(z3["metrics"]["network_bytes"].get<double>() / z0["metrics"]["network_bytes"].get<double>(),
              0.5 + 0.5 * gathered, 0.02);
  // Prefetched one pass ahead, the gathers hide behind compute (they were 2% hidden when issued a pass late).
  for (const char* backend : {"analytical", "simgrid"}) {
    const auto& b = report[std::string("3") + backend]["breakdown"];
    EXPECT_GT(b["hidden_parameter_gather_fraction"].get<double>(), 0.9) << backend;
    EXPECT_GT(b["communication_parameter_gather_s"].get<double>(), 0.0) << backend;
    EXPECT_GT(b["communication_gradient_sync_s"].get<double>(), 0.0) << backend;
  }
  for (const char* zero : {"0", "2", "3"})
    EXPECT_NEAR(report[std::string(zero) + "analytical"]["metrics"]["iteration_time_s"].get<double>() /
                    report[std::string(zero) + "simgrid"]["metrics"]["iteration_time_s"].get<double>(),
                1.0, 0.05);
  auto e = clustersim("run " + src("scenarios/quickstart.yaml") + " --set workload.parallel.zero=4");
  EXPECT_EQ(e.code, 2);
  EXPECT_NE(e.err.find("workload.parallel.zero"), std::string::npos) << e.err;
}

TEST(Cli, ZeroThreeRunsWithPipelines)
{
  // pp 2 x dp 8: each stage's weights are sharded over its 8 replicas and gathered before every pass.
  std::map<std::string, nlohmann::json> report;
  for (const char* zero : {"0", "3"}) {
    fs::path out = fresh_dir(std::string("pz") + zero);
    auto r = clustersim("run " + src("scenarios/quickstart.yaml") +
                        " --quiet --backend analytical --set workload.iterations=1 --set workload.parallel.pp=2 "
                        "--set workload.parallel.dp=8 --set workload.parallel.zero=" +
                        zero + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    report[zero] = read_ordered_json(out / "report.json");
    fs::remove_all(out);
  }
  const auto& z0 = report["0"]["breakdown"];
  const auto& z3 = report["3"]["breakdown"];
  EXPECT_NEAR(z3["memory_parameters_bytes"].get<double>() * 8, z0["memory_parameters_bytes"].get<double>(), 8.0);
  EXPECT_NEAR(z3["memory_optimizer_bytes"].get<double>() * 8, z0["memory_optimizer_bytes"].get<double>(), 8.0);
  EXPECT_GT(z3["communication_parameter_gather_s"].get<double>(), 0.0);
  EXPECT_GT(report["3"]["metrics"]["network_bytes"].get<double>(),
            report["0"]["metrics"]["network_bytes"].get<double>());
}

TEST(Cli, TwoTowerGraphPipelineBeatsTheChainOnBothBackends)
{
  std::map<std::string, nlohmann::json> report;
  for (const char* schedule : {"graph-pipeline", "1f1b"})
    for (const char* backend : {"analytical", "simgrid"}) {
      fs::path out = fresh_dir(std::string("tt") + schedule + backend);
      auto r = clustersim("run " + src("scenarios/two-tower-graph.yaml") + " --quiet --backend " + backend +
                          " --set policies.pipeline=" + schedule + " --out " + out.string());
      ASSERT_EQ(r.code, 0) << r.err;
      report[std::string(schedule) + backend] = read_ordered_json(out / "report.json");
      fs::remove_all(out);
    }
  auto metric = [&](const std::string& key, const char* name) { return report[key]["metrics"][name].get<double>(); };
  for (const char* backend : {"analytical", "simgrid"}) {
    const std::string g = std::string("graph-pipeline") + backend, c = std::string("1f1b") + backend;
    // Depth 5 stages against 8: the ideal bubbles are 4/32 and 7/32 of compute (plus p2p time here).
    EXPECT_LT(metric(g, "iteration_time_s"), 0.95 * metric(c, "iteration_time_s")) << backend;
    EXPECT_NEAR(metric(g, "bubble_fraction"), 4.0 / 32, 0.05) << backend;
    EXPECT_NEAR(metric(c, "bubble_fraction"), 7.0 / 32, 0.06) << backend;
    // The chain's own bubble, apart from the p2p time: 7 / 32 of its compute, and with the rest of the idle the
    // whole of it, as shares of the step.
    const auto& chain = report[c];
    const double step = metric(c, "iteration_time_s"), compute = chain["breakdown"]["compute_s"].get<double>();
    EXPECT_NEAR(chain["breakdown"]["pipeline_bubble_s"].get<double>() / compute, 7.0 / 32, 0.03) << backend;
    EXPECT_NEAR(metric(c, "pipeline_bubble_step_fraction") + metric(c, "other_idle_step_fraction"),
                (step - compute) / step, 1e-9)
        << backend;
    EXPECT_FALSE(report[g]["metrics"].contains("pipeline_bubble_step_fraction")) << "graph pipelines: one idle figure";
    EXPECT_LT(metric(g, "peak_memory_bytes"), metric(c, "peak_memory_bytes")) << backend;
  }
  EXPECT_NEAR(metric("graph-pipelineanalytical", "iteration_time_s") /
                  metric("graph-pipelinesimgrid", "iteration_time_s"),
              1.0, 0.05);
  // Model FLOPs are three passes over the 16 layers' 6.8 GFLOP per sample, 64 samples.
  EXPECT_NEAR(metric("graph-pipelinesimgrid", "tflops_per_gpu") * 1e12 * 8 *
                  metric("graph-pipelinesimgrid", "iteration_time_s"),
              3 * 16 * 6.8e9 * 64, 1e6);
}

TEST(Cli, PlanPrintsRankedPlansWritesTheBestAsAScenarioAndRefusesBadInput)
{
  fs::path out = fresh_dir("plan");
  auto r = clustersim("plan " + src("scenarios/gpt-pipeline.yaml") + " --gpus 8 --top 3 --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("plans enumerated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("   1  "), std::string::npos) << r.out;
  std::ifstream csv(out / "plans.csv");
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(header.rfind("rank,dp,tp,pp,vpp,schedule,micro,recompute,zero", 0), 0u);
  EXPECT_EQ(first.rfind("1,", 0), 0u);
  // The best plan runs as it is, and is the plan ranked first: its iteration time comes back.
  auto run = clustersim("run " + (out / "best.yaml").string() + " --quiet --backend analytical --out " +
                        (out / "run").string());
  EXPECT_EQ(run.code, 0) << run.err;
  std::vector<std::string> cells;
  for (std::stringstream row(first); std::getline(row, cells.emplace_back(), ',');) {
  }
  std::ifstream report(out / "run" / "report.json");
  const auto ran = nlohmann::json::parse(report, nullptr, false);
  ASSERT_FALSE(ran.is_discarded());
  ASSERT_GT(cells.size(), 12u);
  EXPECT_NEAR(ran["metrics"].value("iteration_time_s", 0.0) / std::stod(cells[11]), 1.0, 1e-6) << first;
  fs::remove_all(out);
  auto bad_gpus = clustersim("plan " + src("scenarios/gpt-pipeline.yaml") + " --gpus 12");
  EXPECT_EQ(bad_gpus.code, 2);
  EXPECT_NE(bad_gpus.err.find("--gpus must be whole nodes of 8 GPUs"), std::string::npos) << bad_gpus.err;
  auto bad_memory = clustersim("plan " + src("scenarios/gpt-pipeline.yaml") + " --gpus 8 --memory-limit lots");
  EXPECT_EQ(bad_memory.code, 2);
  EXPECT_NE(bad_memory.err.find("--memory-limit lots"), std::string::npos) << bad_memory.err;
  auto none = clustersim("plan " + src("scenarios/gpt-pipeline.yaml") + " --gpus 8 --memory-limit 1MB");
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.out.find("no plan fits in memory"), std::string::npos) << none.out;
  auto not_training = clustersim("plan " + src("scenarios/alltoall-rail-background.yaml") + " --gpus 8");
  EXPECT_EQ(not_training.code, 2);
}

TEST(Cli, GraphPipeReferenceBeatsTheSequentialPipelineByMoreThanTenPercent)
{
  // validation.md section 4, GraphPipe: > 1.1x over the sequential pipeline on a multi-branch model.
  std::map<std::string, double> time;
  for (const char* schedule : {"graph-pipeline", "1f1b"})
    for (const char* backend : {"analytical", "simgrid"}) {
      fs::path out = fresh_dir(std::string("gp") + schedule + backend);
      auto r = clustersim("run " + src("scenarios/reference/graphpipe-multibranch.yaml") + " --quiet --backend " +
                          backend + " --set policies.pipeline=" + schedule + " --out " + out.string());
      ASSERT_EQ(r.code, 0) << r.err;
      time[std::string(schedule) + backend] =
          read_ordered_json(out / "report.json")["metrics"]["iteration_time_s"].get<double>();
      fs::remove_all(out);
    }
  for (const char* backend : {"analytical", "simgrid"}) {
    const double speedup = time[std::string("1f1b") + backend] / time[std::string("graph-pipeline") + backend];
    EXPECT_GT(speedup, 1.1) << backend;
    EXPECT_LT(speedup, 2.5) << backend; // the paper reports up to 1.6x
  }
}

TEST(Cli, ZeroWithPipelinesShardsTheOptimizerAndMovesTheSameBytes)
{
  // gpt-pipeline (pp 4, vpp 2, dp 4): Megatron's distributed optimizer, a reduce-scatter per stage bucket and an
  // all-gather of the updated shards, in place of the all-reduce.
  std::map<std::string, nlohmann::json> report;
  for (const char* zero : {"0", "2"})
    for (const char* backend : {"analytical", "simgrid"}) {
      fs::path out = fresh_dir(std::string("ppzero") + zero + backend);
      auto r = clustersim("run " + src("scenarios/gpt-pipeline.yaml") + " --quiet --backend " + backend +
                          " --set workload.parallel.zero=" + zero + " --out " + out.string());
      ASSERT_EQ(r.code, 0) << r.err;
      report[std::string(zero) + backend] = read_ordered_json(out / "report.json");
      fs::remove_all(out);
    }
  const auto& z0 = report["0analytical"];
  const auto& z2 = report["2analytical"];
  EXPECT_NEAR(z2["breakdown"]["memory_optimizer_bytes"].get<double>() * 4,
              z0["breakdown"]["memory_optimizer_bytes"].get<double>(), 16.0);
  // Its microbatches accumulate into the whole gradient buffer, reduce-scattered once a step: not sharded.
  EXPECT_EQ(z2["breakdown"]["memory_gradients_bytes"].get<double>(),
            z0["breakdown"]["memory_gradients_bytes"].get<double>());
  EXPECT_NEAR(z2["metrics"]["network_bytes"].get<double>() / z0["metrics"]["network_bytes"].get<double>(), 1.0, 0.01);
  EXPECT_GT(z2["breakdown"]["communication_parameter_gather_s"].get<double>(), 0.0);
  for (const char* zero : {"0", "2"})
    EXPECT_NEAR(report[std::string(zero) + "analytical"]["metrics"]["iteration_time_s"].get<double>() /
                    report[std::string(zero) + "simgrid"]["metrics"]["iteration_time_s"].get<double>(),
                1.0, 0.05);
}

TEST(Cli, StageLayersSetThePartitionAndMemoryFollowsTheLoadedDevice)
{
  // 1F1B holds p microbatches on the first device and one on the last: layers moved to the first device cost
  // more memory than the same layers on the last one.
  std::map<std::string, double> peak;
  for (const char* layers : {"[8,6,5,5]", "[5,5,6,8]"}) {
    fs::path out = fresh_dir("stage_layers");
    auto r = clustersim("run " + src("scenarios/gpt-pipeline.yaml") +
                        " --quiet --backend analytical --set workload.parallel.vpp=1 --set policies.pipeline=1f1b "
                        "--set workload.parallel.stage_layers=" +
                        layers + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    peak[layers] = read_ordered_json(out / "report.json")["metrics"]["peak_memory_bytes"].get<double>();
    fs::remove_all(out);
  }
  EXPECT_GT(peak["[8,6,5,5]"], peak["[5,5,6,8]"] * 1.2);
  // Malformed partitions name the key (a stage of no layers is allowed: it holds only the embedding or the loss).
  for (const char* bad : {"[6,6,6]", "[8,8,8,1]", "[13,12,0,-1]"}) {
    auto e = clustersim(
        "run " + src("scenarios/gpt-pipeline.yaml") +
        " --set workload.parallel.vpp=1 --set policies.pipeline=1f1b --set workload.parallel.stage_layers=" + bad);
    EXPECT_EQ(e.code, 2) << bad;
    EXPECT_NE(e.err.find("workload.parallel.stage_layers"), std::string::npos) << e.err;
  }
}

TEST(Cli, BucketReductionBesideBackwardSlowsItByTheFrameworksShare)
{
  // Issue 19 item 10 for data-parallel buckets: the all-reduce running beside backward takes comm_sm_fraction of the
  // GPU for as long as it runs, so compute grows by at most that share of the communication time, and not at all
  // when the framework reduces after backward.
  auto breakdown = [](const std::string& framework) {
    fs::path out = fresh_dir("beside");
    auto r = clustersim("run " + src("scenarios/quickstart.yaml") +
                        " --backend analytical --quiet --set "
                        "'workload.framework=" +
                        framework + "' --out " + out.string());
    EXPECT_EQ(r.code, 0) << r.err;
    auto b = read_ordered_json(out / "report.json").at("breakdown");
    fs::remove_all(out);
    return std::make_pair(b.at("compute_s").get<double>(), b.at("communication_s").get<double>());
  };
  const auto [free_compute, comm] = breakdown("{name: megatron-core, comm_sm_fraction: 0}");
  const auto [slowed, comm2] = breakdown("{name: megatron-core, comm_sm_fraction: 0.3}");
  EXPECT_GT(slowed - free_compute, 0.1 * 0.3 * comm);
  EXPECT_LE(slowed - free_compute, 0.3 * comm * 1.001);
  EXPECT_DOUBLE_EQ(comm2, comm);
  const auto [after, comm3] = breakdown("{name: megatron-core, comm_sm_fraction: 0.3, overlap: after-backward}");
  EXPECT_NEAR(after, free_compute, 1e-12); // the same kernels, summed in another order
}

TEST(Cli, AnMoePipelineStatesItsBubbleApartFromExposedCommunication)
{
  // Mixtral's 8 layers on pp 2 under 1F1B, 8 microbatches, balanced routing: the schedule's own bubble on compute
  // alone (routed experts at the routing's mean load) is about (p - 1) / m = 1/8 of the compute, and it and the rest
  // of the idle (exposed all-to-alls and reductions) add up to the step's idle.
  const auto report = analytical_report("moe_bubble", "scenarios/moe-mixtral.yaml",
                                        "--set workload.parallel.pp=2 --set policies.pipeline=1f1b"
                                        " --set policies.moe_routing=balanced");
  ASSERT_FALSE(report.is_null());
  const auto& m = report["metrics"];
  const double step = m["iteration_time_s"].get<double>(), compute = report["breakdown"]["compute_s"].get<double>();
  EXPECT_NEAR(report["breakdown"]["pipeline_bubble_s"].get<double>() / compute, 1.0 / 8, 0.03);
  EXPECT_NEAR(m["pipeline_bubble_step_fraction"].get<double>() + m["other_idle_step_fraction"].get<double>(),
              (step - compute) / step, 1e-9);
}

TEST(Cli, PlanConfirmsItsBestPlansOnSimgridSideBySide)
{
  // --confirm 2 --jobs 2: both confirmations run at once, each in its own process, and each is printed beside the
  // analytical time it confirms; --jobs 0 is refused.
  fs::path out = fresh_dir("plan_confirm");
  auto r = clustersim("plan " + src("scenarios/gpt-pipeline.yaml") + " --gpus 8 --top 2 --confirm 2 --jobs 2 --out " +
                      out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 at a time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("   1  simgrid "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("   2  simgrid "), std::string::npos) << r.out;
  std::ifstream csv(out / "plans.csv");
  std::string header, row;
  std::getline(csv, header);
  for (int i = 0; i < 2 && std::getline(csv, row); ++i) {
    std::vector<std::string> cells;
    for (std::stringstream ss(row); std::getline(ss, cells.emplace_back(), ',');) {
    }
    ASSERT_GT(cells.size(), 15u) << row;
    EXPECT_GT(std::stod(cells[15]), 0.0) << row; // simgrid_iteration_time_s
  }
  fs::remove_all(out);
  auto bad = clustersim("plan " + src("scenarios/gpt-pipeline.yaml") + " --gpus 8 --jobs 0");
  EXPECT_EQ(bad.code, 2) << bad.err;
}

TEST(Cli, PlanSetsTheScenariosOwnPlanBesideTheBest)
{
  // gpt-pipeline.yaml runs on 16 GPUs: planned for 16, its own plan is timed and compared; for 8, it is not.
  auto same = clustersim("plan " + src("scenarios/gpt-pipeline.yaml") + " --gpus 16 --top 1");
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("the scenario's own plan (dp 4 x tp 1 x pp 4"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("slower than the best"), std::string::npos) << same.out;
  // With pipelined plans among those shown, a line names the order every plan ran in and the flag that tries the other.
  auto deeper = clustersim("plan " + src("scenarios/gpt-pipeline.yaml") + " --gpus 16 --top 40");
  ASSERT_EQ(deeper.code, 0) << deeper.err;
  EXPECT_NE(deeper.out.find("rank order tp-pp-dp (the scenario's) for every plan; --placements also tries tp-dp-pp"),
            std::string::npos)
      << deeper.out;
  EXPECT_EQ(same.out.find("rank order"), std::string::npos) << same.out; // the best one is not pipelined
  auto other = clustersim("plan " + src("scenarios/gpt-pipeline.yaml") + " --gpus 8 --top 1");
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_EQ(other.out.find("the scenario's own plan"), std::string::npos) << other.out;
}

TEST(Cli, PlanSearchesFp8RecipesTheDeviceRuns)
{
  // NeMo's Llama 2 7B on 8 H100 planned over bf16 and every FP8 recipe an H100 runs (not mxfp8, Blackwell's): the
  // best plan runs its GEMMs in FP8, faster than the best bf16 plan, and best.yaml carries the recipe.
  fs::path out = fresh_dir("plan_fp8");
  const std::string scenario = src("scenarios/reference/nemo-llama2-7b-fp8.yaml");
  auto all = clustersim("plan " + scenario + " --gpus 8 --top 1 --fp8 all --out " + out.string());
  ASSERT_EQ(all.code, 0) << all.err;
  const auto [header, first] = plans_head(out / "plans.csv");
  auto column = [](const std::string& row, int i) {
    std::stringstream ss(row);
    std::string c;
    for (int k = 0; k <= i; ++k)
      std::getline(ss, c, ',');
    return c;
  };
  EXPECT_EQ(column(header, 19), "fp8");
  const std::string recipe = column(first, 19);
  EXPECT_NE(recipe, "none");
  EXPECT_NE(recipe, "mxfp8");
  std::ifstream best(out / "best.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(best)), std::istreambuf_iterator<char>());
  EXPECT_NE(yaml.find("fp8: " + recipe), std::string::npos) << yaml;
  fs::remove_all(out);
  auto bf16 = clustersim("plan " + scenario + " --gpus 8 --top 1 --fp8 none --out " + out.string());
  ASSERT_EQ(bf16.code, 0) << bf16.err;
  std::ifstream csv2(out / "plans.csv");
  std::string first_bf16;
  std::getline(csv2, first_bf16);
  std::getline(csv2, first_bf16);
  EXPECT_LT(std::stod(column(first, 11)), 0.95 * std::stod(column(first_bf16, 11))); // iteration_time_s
  fs::remove_all(out);
  auto unknown = clustersim("plan " + scenario + " --gpus 8 --fp8 fp4");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("unknown recipe 'fp4'"), std::string::npos) << unknown.err;
  auto hopper = clustersim("plan " + scenario + " --gpus 8 --fp8 mxfp8");
  EXPECT_EQ(hopper.code, 2);
  EXPECT_NE(hopper.err.find("--fp8 mxfp8: "), std::string::npos) << hopper.err;
  // On Blackwell the same search takes MXFP8 among the recipes it tries.
  auto blackwell = clustersim("plan " + scenario + " --gpus 8 --top 40 --fp8 mxfp8 --set cluster.device=b200");
  ASSERT_EQ(blackwell.code, 0) << blackwell.err;
  EXPECT_NE(blackwell.out.find(" mxfp8 "), std::string::npos) << blackwell.out;
}

TEST(Cli, PlanSearchesDispatchersAndRefusesThemWithoutExperts)
{
  // Mixtral cut to 2 layers on two nodes of 4 GPUs, every dispatcher searched: the table names each plan's, plans.csv
  // has a dispatcher column (before dp_replicate, the last) and best.yaml writes the best plan's.
  fs::path out = fresh_dir("plan_dispatch");
  const std::string mixtral = src("scenarios/moe-mixtral.yaml") +
                              " --set workload.model.layers=2 --set workload.batch.global=16 --set "
                              "cluster.gpus_per_node=4 --set cluster.network.nics_per_node=4";
  auto all = clustersim("plan " + mixtral + " --gpus 8 --top 3 --dispatchers all --out " + out.string());
  ASSERT_EQ(all.code, 0) << all.err;
  const auto [header, first] = plans_head(out / "plans.csv");
  const std::string tail = ",dispatcher,dp_replicate";
  EXPECT_EQ(header.substr(header.size() - tail.size()), tail) << header;
  const std::string row = first.substr(0, first.rfind(','));
  const std::string dispatcher = row.substr(row.rfind(',') + 1);
  EXPECT_NE(all.out.find(" " + dispatcher + " "), std::string::npos) << all.out;
  std::ifstream best(out / "best.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(best)), std::istreambuf_iterator<char>());
  EXPECT_NE(yaml.find("dispatcher: " + dispatcher), std::string::npos) << yaml;
  auto unknown = clustersim("plan " + mixtral + " --gpus 8 --dispatchers nccl");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("--dispatchers nccl: unknown dispatcher 'nccl'"), std::string::npos) << unknown.err;
  auto dense = clustersim("plan " + src("scenarios/quickstart.yaml") + " --gpus 8 --dispatchers deepep");
  EXPECT_EQ(dense.code, 2);
  EXPECT_NE(dense.err.find("the model has no experts to dispatch to"), std::string::npos) << dense.err;
}

TEST(Cli, PlanSearchesRecomputeModules)
{
  // Llama 2 70B on 32 H100 (the Galvatron case) held to 50 GiB a GPU, with selective recomputation searched over
  // Megatron-Core's module sets: recomputing the norms alone frees enough for tp 4 x pp 8 under 1F1B with a better
  // layer split (27.8 s against 30.1 s without the search), and best.yaml carries the modules; without the search no
  // plan names any.
  fs::path out = fresh_dir("plan_modules");
  const std::string scenario = src("scenarios/reference/galvatron-llama70b.yaml") + " --memory-limit 50GiB";
  auto r = clustersim("plan " + scenario + " --gpus 32 --top 2 --recompute-modules --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("selective:layernorm"), std::string::npos) << r.out;
  std::ifstream csv(out / "plans.csv");
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  // The last four columns: the recompute modules, the plan's rank order, (MoE models only) its dispatcher and its
  // replicas of the sharded state (plan --hsdp).
  const std::string tail = ",recompute_modules,placement,dispatcher,dp_replicate";
  EXPECT_EQ(header.substr(header.size() - tail.size()), tail) << header;
  const auto from_end = [](const std::string& line, int k) { // the k-th column from the end (0: the last)
    std::size_t end = line.size();
    for (int i = 0; i < k; ++i)
      end = line.rfind(',', end - 1);
    const std::size_t start = line.rfind(',', end - 1);
    return line.substr(start + 1, end - start - 1);
  };
  EXPECT_EQ(from_end(first, 3), "layernorm");
  EXPECT_EQ(from_end(first, 2), "tp-pp-dp"); // galvatron-llama70b.yaml's order
  EXPECT_EQ(from_end(first, 1), "");         // a dense model dispatches nothing
  EXPECT_EQ(from_end(first, 0), "1");        // every replica one shard group without --hsdp
  std::ifstream best(out / "best.yaml");
  const std::string yaml((std::istreambuf_iterator<char>(best)), std::istreambuf_iterator<char>());
  EXPECT_NE(yaml.find("recompute_modules"), std::string::npos) << yaml;
  auto run = clustersim("run " + (out / "best.yaml").string() + " --quiet --backend analytical --out " +
                        (out / "run").string());
  EXPECT_EQ(run.code, 0) << run.err;
  fs::remove_all(out);
  auto plain = clustersim("plan " + scenario + " --gpus 32 --top 2");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("selective:"), std::string::npos) << plain.out;
}
