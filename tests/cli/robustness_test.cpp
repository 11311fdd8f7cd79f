// Hostile input through the CLI: overflowing counts, devices and folders as files, bad output folders, oversized
// graphs and interrupts all end in one clean line and exit 2 (or 130/143), with nothing written.
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

using cs::testing::clustersim;
using cs::testing::fresh_dir;
using cs::testing::read_json;
using cs::testing::src;

using Result = cs::testing::CliResult;
// Exit 2 with one positioned line.
void expect_clean_refusal(const Result& r, const std::string& words)
{
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

} // namespace

TEST(Robustness, CountsThatWouldOverflowAreRefusedWhereTheyAreRead)
{
  const std::string q = src("scenarios/quickstart.yaml");
  // Once a SIGFPE: 65536 x 65536 GPUs wrapped to 0 and dp became 0.
  expect_clean_refusal(clustersim("validate " + q +
                                  " --set cluster.nodes=65536 --set cluster.gpus_per_node=65536 "
                                  "--set workload.parallel.dp=0"),
                       "gpus_per_node' must be at most 1024");
  expect_clean_refusal(clustersim("validate " + q + " --set cluster.nodes=65536 --set cluster.gpus_per_node=1024"),
                       "more than the 1048576 clustersim accepts");
  // Once an mfu of 2.31: 4 x hidden overflowed.
  expect_clean_refusal(
      clustersim("validate " + q + " --set workload.model.ffn=0 --set workload.model.hidden=1073741824"),
      "hidden' must be at most 1048576");
  expect_clean_refusal(clustersim("validate " + q + " --set workload.model.layers=2000000000"), "at most 100000");
  expect_clean_refusal(clustersim("validate " + q + " --set workload.gradient_bucket=1e308GiB"),
                       "beyond the largest size");
  expect_clean_refusal(clustersim("validate " + q +
                                  " --set workload.parallel.tp=1048576 --set "
                                  "workload.parallel.pp=1048576"),
                       "tp = 1048576");
  // Once accepted: 65,536 racks x 4,096 hosts, a platform no run could build (131,072 hosts already took 21 GB).
  expect_clean_refusal(clustersim("validate " + src("scenarios/reference/mapreduce-hit-paper.yaml") +
                                  " --set cluster.racks=65536 --set cluster.hosts_per_rack=4096"),
                       "--set:1:2: cluster.hosts_per_rack=4096: racks x hosts_per_rack = 268435456 hosts");
  // Once runs without end: a heartbeat of 1 ns (a scheduling round each) and byte counts scaled by 1e300.
  const std::string wordcount = src("scenarios/reference/mapreduce-replay-wordcount.yaml");
  expect_clean_refusal(clustersim("validate " + wordcount + " --set workload.mapreduce.heartbeat=1ns"),
                       "heartbeat must be at least 1 ms");
  expect_clean_refusal(clustersim("validate " + wordcount + " --set workload.mapreduce.trace.scale=1e300"),
                       "must be at most 1000000");
  // Once runs without end: one map per byte, 2^31 - 1 containers a host or synthetic jobs, a million tasks past the
  // bound (refused before any job is built).
  const std::string hit = src("scenarios/reference/mapreduce-hit-paper.yaml");
  expect_clean_refusal(clustersim("validate " + hit + " --set workload.mapreduce.block_size=1B"), "at least 1 MiB");
  expect_clean_refusal(clustersim("validate " + hit + " --set workload.mapreduce.containers_per_host=2147483647"),
                       "at most 1,048,576 containers");
  expect_clean_refusal(clustersim("validate " + hit + " --set workload.mapreduce.synthetic.jobs=2147483647"),
                       "must be at most 100000");
  expect_clean_refusal(clustersim("run " + hit + " --set workload.mapreduce.synthetic.jobs=100000 --out " +
                                  (std::filesystem::temp_directory_path() / "cs_robust_tasks").string()),
                       "more than the 1000000 a run is bounded to");
  // Once a SIGFPE in the planner: dp x micro wrapped.
  expect_clean_refusal(clustersim("plan " + src("scenarios/reference/megatron-7.5b.yaml") + " --gpus 268435456"),
                       "not in range");
}

TEST(Robustness, DevicesFoldersAndMissingFilesAreNotRead)
{
  expect_clean_refusal(clustersim("validate /dev/zero"), "not a regular file");
  expect_clean_refusal(clustersim("validate " + src("scenarios")), "it is a folder");
  expect_clean_refusal(
      clustersim("validate " + src("scenarios/quickstart.yaml") + " --set cluster.profile=/dev/urandom"),
      "not a regular file");
  expect_clean_refusal(clustersim("trace " + src("traces")), "it is a folder");
}

TEST(Robustness, TraceFormatIsDetectedOrRefused)
{
  auto rumen = clustersim("trace " + src("traces/samples/hadoop/2jobs2min-rumen-jh.json"));
  EXPECT_EQ(rumen.code, 0) << rumen.err;
  EXPECT_NE(rumen.out.find("(rumen): 2 jobs read"), std::string::npos) << rumen.out;
  auto jhist = clustersim("trace " + src("traces/samples/hadoop/job_1329348432655_0001-sleep-10m-1r.jhist"));
  EXPECT_NE(jhist.out.find("(jhist)"), std::string::npos) << jhist.out;
  auto swim = clustersim("trace " + src("traces/samples/swim/FB-2009_samples_24_times_1hr_0.tsv"));
  EXPECT_NE(swim.out.find("(swim)"), std::string::npos) << swim.out;
  expect_clean_refusal(clustersim("trace " + src("traces/samples/MANIFEST.md")), "cannot tell the trace format");
}

TEST(Robustness, OutputFolderIsCheckedBeforeTheRun)
{
  const fs::path file = fresh_dir("file");
  {
    std::ofstream(file) << "keep me\n";
  }
  const std::string q = src("scenarios/quickstart.yaml");
  expect_clean_refusal(clustersim("run " + q + " --out " + file.string()), "is a file, not a folder");
  expect_clean_refusal(clustersim("run " + q + " --out " + (file / "sub").string()), "so the folder cannot be made");
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "keep me\n");
  fs::remove(file);
  expect_clean_refusal(clustersim("run " + q + " --set name=.."), "must not be '.' or '..'");
}

TEST(Robustness, ARunReplacesThePreviousRunsOutputsAndKeepsOtherFiles)
{
  const fs::path out = fresh_dir("set");
  const std::string q = src("scenarios/quickstart.yaml") + " --backend analytical --quiet --out " + out.string();
  ASSERT_EQ(clustersim("run " + q + " --trace").code, 0);
  ASSERT_TRUE(fs::exists(out / "trace.json"));
  {
    std::ofstream(out / "notes.txt") << "mine\n";
  }
  ASSERT_EQ(clustersim("run " + q).code, 0);
  EXPECT_FALSE(fs::exists(out / "trace.json")) << "a stale trace beside a new report";
  EXPECT_TRUE(fs::exists(out / "report.json"));
  EXPECT_TRUE(fs::exists(out / "notes.txt")) << "a file the run did not write is the user's";
  for (const auto& entry : fs::directory_iterator(out))
    EXPECT_NE(entry.path().extension(), ".tmp") << "a staged file left behind: " << entry.path();
  fs::remove_all(out);
}

TEST(Robustness, AGraphPastTheTaskLimitIsRefusedWithNothingWritten)
{
  const fs::path out = fresh_dir("limit");
  auto r = clustersim("run " + src("scenarios/quickstart.yaml") + " --max-tasks 1000 --out " + out.string());
  expect_clean_refusal(r, "needs more than 1000 tasks");
  EXPECT_NE(r.err.find("--replicas one"), std::string::npos);
  EXPECT_FALSE(fs::exists(out));
}

TEST(Robustness, AnInterruptedRunSaysSoAndWritesNothing)
{
  // The SWIM hour takes seconds (2.8 s here); the signal arrives half a second in, after the handlers are installed.
  const fs::path out = fresh_dir("interrupt");
  const std::string cmd =
      std::string(CS_BINARY) + " run " + src("scenarios/reference/mapreduce-swim-hour.yaml") + " --out " + out.string();
  auto r = cs::testing::run_clustersim("--version >/dev/null; (" + cmd +
                                       " & pid=$!; sleep 0.5; kill -TERM $pid; wait $pid; echo exit=$?) 2>&1");
  EXPECT_NE(r.out.find("exit=143"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("clustersim: interrupted; nothing was written"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "report.json"));
}

TEST(Robustness, OneSymmetricReplicaGivesTheSameStepAndTraffic)
{
  // The quickstart's buckets mix protocols (LL128 and Simple): closed-form traffic must be expanded per protocol.
  for (const char* scenario : {"reference/megatron-7.5b.yaml", "reference/megatron-145.6b.yaml", "quickstart.yaml"}) {
    nlohmann::json reports[2];
    for (int one = 0; one < 2; ++one) {
      const fs::path out = fresh_dir(std::string("rep") + std::to_string(one));
      auto r = clustersim("run " + src(std::string("scenarios/") + scenario) +
                          " --backend analytical --quiet --set workload.iterations=1 --set cluster.stragglers.spread=0 "
                          "--replicas " +
                          (one ? "one" : "all") + " --out " + out.string());
      ASSERT_EQ(r.code, 0) << r.err;
      reports[one] = read_json(out / "report.json").at("metrics");
      fs::remove_all(out);
    }
    const auto& all = reports[0];
    const auto& one = reports[1];
    EXPECT_GT(all.at("replicas_simulated").get<double>(), 1) << scenario;
    EXPECT_EQ(one.at("replicas_simulated").get<double>(), 1) << scenario;
    EXPECT_LT(one.at("task_count").get<double>() * 10, all.at("task_count").get<double>()) << scenario;
    // Replicas left out see each collective's closed form; the trees' forms are estimates of their flows, and the
    // 7.5B row's data-parallel buckets go to the tree (0.15% apart).
    EXPECT_NEAR(one.at("iteration_time_s").get<double>(), all.at("iteration_time_s").get<double>(),
                3e-3 * all.at("iteration_time_s").get<double>())
        << scenario;
    for (const char* key : {"network_bytes", "network_bytes_inter_node"})
      EXPECT_NEAR(one.at(key).get<double>(), all.at(key).get<double>(), 1e-6 * all.at(key).get<double>())
          << scenario << " " << key;
  }
}

TEST(Robustness, AutoSimulatesOneReplicaOfALargeSymmetricRunAndSaysSo)
{
  const fs::path out = fresh_dir("auto");
  // Four iterations: every replica would be ~2.2M tasks, past the automatic limit (two were 1.1M).
  auto r = clustersim("run " + src("scenarios/reference/llmfoundry-a100-80gb-mpt-70b.yaml") +
                      " --set workload.iterations=4 --set cluster.stragglers.spread=0 --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 of 64 data-parallel replicas simulated"), std::string::npos) << r.out;
  EXPECT_EQ(read_json(out / "report.json").at("metrics").at("replicas_simulated").get<double>(), 1);
  fs::remove_all(out);
}

TEST(Robustness, IdleGpusAreAWarningInTheReportAndOnStderr)
{
  const fs::path out = fresh_dir("idle");
  auto r = clustersim("run " + src("scenarios/quickstart.yaml") +
                      " --backend analytical --quiet --set cluster.nodes=3 --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: 8 of the cluster's 24 GPUs are left idle"), std::string::npos) << r.err;
  const auto warnings = read_json(out / "report.json").at("warnings");
  ASSERT_EQ(warnings.size(), 1u);
  fs::remove_all(out);
  // A collective sweep that would never end is refused when read.
  expect_clean_refusal(clustersim("validate " + src("scenarios/reference/nccl-a100-2node-hdr.yaml") +
                                  " --set workload.collective.factor=1.0000001"),
                       "at most 10000");
}

TEST(Robustness, SimgridTakesGraphsPastHalfTheProcessMappingsAndRefusesPastAll)
{
  // A 1 MiB tree all-reduce over 160 x 8 H100 is ~40,000 streams, each a SimGrid actor: with a guard page each, the
  // stacks needed more mappings than Linux allows a process and SimGrid aborted. Without guard pages it runs; over
  // 512 x 8 (127,000 actors) it is refused with exit 2 before anything runs, and nothing is written.
  const fs::path dir = fresh_dir("actors");
  fs::create_directories(dir);
  const fs::path scenario = dir / "tree.yaml";
  std::ofstream(scenario)
      << "name: tree\nbackend: simgrid\n"
         "cluster: {device: h100-sxm5, nodes: 160, gpus_per_node: 8, intra_node: {kind: nvswitch},\n"
         "  network: {kind: fat-tree, nic_bandwidth: 400Gb/s, nics_per_node: 8}}\n"
         "workload: {kind: collective, collective: {op: all-reduce, min_bytes: 1MiB, max_bytes: "
         "1MiB, pricing: flows}}\n";
  auto ok = clustersim("run " + scenario.string() + " --quiet --out " + (dir / "ok").string());
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(dir / "ok" / "report.json"));
  auto big = clustersim("run " + scenario.string() + " --set cluster.nodes=512 --out " + (dir / "big").string());
  EXPECT_EQ(big.code, 2) << big.err;
  EXPECT_NE(big.err.find("SimGrid actors"), std::string::npos) << big.err;
  EXPECT_FALSE(fs::exists(dir / "big"));
  fs::remove_all(dir);
}

TEST(Robustness, AnUnterminatedQuoteIsRefusedAtItsOpening)
{
  // yaml-cpp reads an unclosed quoted string to the end of the file: the rest of the scenario became its text and
  // the run used defaults (exit 0).
  const fs::path dir = fresh_dir("quotes");
  fs::create_directories(dir);
  std::ofstream(dir / "open.yaml") << "name: x\ndescription: \"a run\nworkload: {kind: transformer-training}\n";
  expect_clean_refusal(clustersim("run " + (dir / "open.yaml").string() + " --out " + (dir / "out").string()),
                       "open.yaml:2:14: a quoted string opened here is never closed");
  EXPECT_FALSE(fs::exists(dir / "out"));
  std::ofstream(dir / "single.yaml") << "name: 'it''s\n";
  expect_clean_refusal(clustersim("validate " + (dir / "single.yaml").string()), "single.yaml:1:7: a quoted");
  // Quotes that are text: in a plain scalar, a comment, a block scalar; a quoted string over two lines closes.
  std::ofstream(dir / "text.yaml") << "name: it's  # \"not a string\n"
                                      "description: |\n  'tis a \"test\n  more\n"
                                      "seed: 1\nbackend: \"an\n  analytical\"\n";
  const auto text = clustersim("validate " + (dir / "text.yaml").string());
  EXPECT_EQ(text.err.find("never closed"), std::string::npos) << text.err;
  fs::remove_all(dir);
}

TEST(Robustness, RecursiveAnchorsAndDeepNestingAreRefusedWithAPosition)
{
  // Once a SIGSEGV: an alias to the list that holds it made the document cyclic, and walking it overflowed the stack.
  const fs::path dir = fresh_dir("anchors");
  fs::create_directories(dir);
  std::ofstream(dir / "recursive.yaml") << "name: x\nfoo: &a [*a]\n";
  expect_clean_refusal(clustersim("validate " + (dir / "recursive.yaml").string()), "recursive.yaml:2:6: an alias");
  expect_clean_refusal(clustersim("validate " + src("scenarios/quickstart.yaml") + " --set 'cluster.nodes=&a [*a]'"),
                       "--set:1:1: 'cluster.nodes=&a [*a]': an alias refers to");
  std::ofstream(dir / "deep.yaml") << "name: x\nfoo: " << std::string(300, '[') << std::string(300, ']') << "\n";
  expect_clean_refusal(clustersim("validate " + (dir / "deep.yaml").string()), "nest more than 200 deep");
  // Up to the bound is fine for the reader (the scenario then fails on its unknown key, not on its depth).
  std::ofstream(dir / "ok.yaml") << "name: x\nfoo: " << std::string(150, '[') << std::string(150, ']') << "\n";
  const auto ok = clustersim("validate " + (dir / "ok.yaml").string());
  EXPECT_EQ(ok.err.find("deep"), std::string::npos) << ok.err;
  fs::remove_all(dir);
}

TEST(Robustness, TextThatIsNotUtf8AndJsonNestedPastTheBoundAreRefusedWhereTheyAreRead)
{
  // Once an uncaught json type_error 316 after the whole simulation: a name of invalid UTF-8 reached report.json.
  const fs::path dir = fresh_dir("utf8");
  fs::create_directories(dir);
  std::ofstream(dir / "bad.yaml") << "name: \"x\xff\xfe\"\n";
  expect_clean_refusal(clustersim("validate " + (dir / "bad.yaml").string()),
                       "bad.yaml:1:7: the text is not valid UTF-8");
  std::ofstream(dir / "overlong.yaml") << "name: \"\xc0\xaf\"\n"; // an overlong '/'
  expect_clean_refusal(clustersim("validate " + (dir / "overlong.yaml").string()), "not valid UTF-8");
  const fs::path out = dir / "out";
  EXPECT_EQ(clustersim("run " + src("scenarios/quickstart.yaml") +
                       " --backend analytical --quiet --set name=h\xc3\xa9llo "
                       "--out " +
                       out.string())
                .code,
            0); // é is fine
  // Once a stack overflow: 100,000-deep arrays in a measurement file.
  std::ofstream(dir / "deep.json") << "{\"host\": " << std::string(100000, '[') << std::string(100000, ']') << "}\n";
  expect_clean_refusal(clustersim("fit " + (dir / "deep.json").string() + " --out " + (dir / "p.json").string()),
                       "deep.json:1:209: arrays and objects nest more than 200 deep");
  EXPECT_FALSE(fs::exists(dir / "p.json"));
  fs::remove_all(dir);
}

TEST(Robustness, ANameTooLongForAFolderIsRefusedBeforeTheRun)
{
  // Once an uncaught filesystem_error after the run: the default output folder out/<name>/ past NAME_MAX.
  expect_clean_refusal(clustersim("run " + src("scenarios/quickstart.yaml") +
                                  " --backend analytical --set name=" + std::string(300, 'a')),
                       "name is 300 bytes long; at most 200");
}

TEST(Robustness, SimgridFinishesAnMoeStepWhoseRoundingOnceAbortedIt)
{
  // Qwen3-30B-A3B over EP 16 on two nodes, cut to 4 layers: at a max-min precision of 1e-12 SimGrid left a constraint
  // of 2.3e-10 usage with no active flow and aborted the process (exit 134); the ideal model's solver now runs at 1e-9.
  const fs::path out = fresh_dir("simgrid_rounding");
  const auto r = clustersim("run " + src("scenarios/reference/mbridge-qwen3-30b-a3b-fp8.yaml") +
                            " --backend simgrid --set workload.model.layers=4 --set workload.batch.global=128 --quiet "
                            "--out " +
                            out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GT(read_json(out / "report.json")["metrics"]["iteration_time_s"].get<double>(), 0);
}
