// Spark runs through the command line (one SimGrid engine per process): determinism, cache and allocation
// invariants, event-log replay against the recorded stage durations, and bad input refused cleanly.
#include "../cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace {

using cs::testing::fresh_dir;
using cs::testing::src;

struct Run {
  int code = -1;
  std::string err;
  nlohmann::json metrics;
  std::vector<std::vector<std::string>> apps, stages; // CSV rows without the header
};

std::vector<std::vector<std::string>> csv(const fs::path& path)
{
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');)
      cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

Run spark_run(const std::string& scenario, const std::string& extra = "", const std::string& tag = "run")
{
  const fs::path dir = fresh_dir(tag);
  auto r = cs::testing::run_clustersim("run " + scenario + " --quiet " + extra + " --out " + dir.string());
  Run out;
  out.code = r.code;
  out.err = r.err;
  if (r.code == 0) {
    std::ifstream in(dir / "report.json");
    out.metrics = nlohmann::json::parse(in)["metrics"];
    out.apps = csv(dir / "apps.csv");
    out.stages = csv(dir / "stages.csv");
  }
  fs::remove_all(dir);
  return out;
}

fs::path scenario_file(const std::string& tag, const std::string& text)
{
  const fs::path dir = fresh_dir("scn_" + tag);
  fs::create_directories(dir);
  std::ofstream(dir / "s.yaml") << text;
  return dir / "s.yaml";
}

const char* kCluster = R"(cluster:
  device: cpu-node
  racks: 1
  hosts_per_rack: 4
  host: {cores: 16, memory: 64GiB, disk_bandwidth: 600MB/s}
  network: {kind: tree, host_link: 10Gb/s}
)";

TEST(SparkRun, SameSeedSameReportAndEveryTaskRuns)
{
  const auto a = spark_run(src("scenarios/spark-hibench.yaml"), "--seed 4", "a");
  const auto b = spark_run(src("scenarios/spark-hibench.yaml"), "--seed 4", "b");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.metrics.dump(), b.metrics.dump());
  EXPECT_EQ(a.metrics["applications"].get<double>(), 4);
  double tasks = 0;
  for (const auto& s : a.stages)
    tasks += std::stod(s[3]);
  EXPECT_EQ(tasks, a.metrics["tasks"].get<double>());
}

TEST(SparkRun, FlowLevelNetworkTracksSimgrid)
{
  // HiBench's four applications on 4 hosts: few flows at a time, each held by one link or disk.
  const auto sg = spark_run(src("scenarios/spark-hibench.yaml"), "", "sg");
  const auto fl = spark_run(src("scenarios/spark-hibench.yaml"), "--backend analytical", "fl");
  ASSERT_EQ(fl.code, 0) << fl.err;
  EXPECT_EQ(fl.metrics["tasks"], sg.metrics["tasks"]);
  for (const char* k : {"mean_jct_s", "makespan_s"})
    EXPECT_NEAR(fl.metrics[k].get<double>() / sg.metrics[k].get<double>(), 1.0, 0.02) << k;
}

TEST(SparkRun, AmpleMemoryHitsEveryReadAndTightMemoryRecomputes)
{
  const auto text = std::string("name: t\n") + kCluster + R"(workload:
  kind: spark
  spark:
    executor_memory: 16GiB
    applications: [{workload: kmeans, profile: large, executors: 8}]
)";
  const auto ample = spark_run(scenario_file("ample", text).string());
  ASSERT_EQ(ample.code, 0) << ample.err;
  EXPECT_DOUBLE_EQ(ample.metrics["cache_hit_rate"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(ample.metrics["bytes_recomputed"].get<double>(), 0.0);
  EXPECT_GT(ample.metrics["cache_reads"].get<double>(), 0);
  // 4.5 GB of points in 8 executors of 1 GiB heaps: most partitions are recomputed from HDFS every iteration.
  const auto tight = spark_run(scenario_file("tight", text).string(), "--set workload.spark.executor_memory=1GiB");
  ASSERT_EQ(tight.code, 0) << tight.err;
  EXPECT_LT(tight.metrics["cache_hit_rate"].get<double>(), 0.9);
  EXPECT_GT(tight.metrics["bytes_recomputed"].get<double>(), 1e9);
  EXPECT_GT(tight.metrics["mean_jct_s"].get<double>(), ample.metrics["mean_jct_s"].get<double>());
}

TEST(SparkRun, DynamicAllocationStartsEmptyRampsUpAndReleasesIdleExecutors)
{
  // Iterations of uncached k-means with 90 s of driver work between them: executors idle past executorIdleTimeout
  // (60 s) are released and requested again at the next backlog.
  const auto text = std::string("name: t\n") + kCluster + R"(workload:
  kind: spark
  spark:
    applications:
      - {workload: kmeans, profile: large, executors: 4, storage: NONE, iterations: 2, driver_time: 90s}
policies: {spark_provisioning: dynamic}
)";
  const auto r = spark_run(scenario_file("dyn", text).string());
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(r.apps.size(), 1u);
  EXPECT_GE(std::stod(r.apps[0][2]), 1.0); // the first executor after schedulerBacklogTimeout (and start-up)
  EXPECT_GT(std::stoi(r.apps[0][7]), 4);   // not bounded by the static demand: the backlog asks for more
  EXPECT_GT(r.metrics["executors_removed"].get<double>(), 0);
  EXPECT_GT(r.metrics["executors_added"].get<double>(), std::stod(r.apps[0][7])); // requested again later
}

/** Recorded stage durations of the bundled logs (SparkListenerStageCompleted: completion - submission). */
void expect_stages_within(const Run& r, const std::vector<double>& recorded, double tolerance)
{
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(r.stages.size(), recorded.size());
  for (std::size_t i = 0; i < recorded.size(); ++i)
    EXPECT_NEAR(std::stod(r.stages[i][6]) / recorded[i], 1.0, tolerance) << "stage " << i;
}

TEST(SparkReplay, EventLogsReplayTheirStageDurationsWithin20Percent)
{
  expect_stages_within(spark_run(src("scenarios/reference/spark-replay-local.yaml")), {0.966, 0.123}, 0.20);
  expect_stages_within(spark_run(src("scenarios/reference/spark-replay-yarn.yaml")), {16.616, 14.811, 34.017}, 0.20);
}

fs::path replay_scenario(const std::string& tag, const std::string& log, int hosts, int cores, const std::string& more)
{
  return scenario_file(tag, "name: " + tag + "\ncluster:\n  device: cpu-node\n  racks: 1\n  hosts_per_rack: " +
                                std::to_string(hosts) + "\n  host: {cores: " + std::to_string(cores) +
                                ", memory: 16GiB, disk_bandwidth: 500MB/s}\n  network: {kind: tree, host_link: "
                                "10Gb/s, latency: 50us}\nworkload: {kind: spark, spark: {executor_cores: " +
                                std::to_string(cores) +
                                ", executor_memory: 4GiB, executor_startup: 0s, replication: "
                                "1, applications: [{event_log: " +
                                src("traces/samples/spark/" + log) + more + "}]}}\n");
}

TEST(SparkReplay, FailuresConcurrentJobsAndTheDriversTimeAsRecorded)
{
  // Spark 1.2: the stage that reads only local shuffle blocks waits for its parent, and its failing task aborts its
  // job as recorded (stage durations 0.591, 0.457, 0.051, 0.035 s; the application 9.011 s).
  const auto old = spark_run(replay_scenario("spark12", "local-1422981780767", 1, 8, "").string());
  expect_stages_within(old, {0.591, 0.457, 0.051, 0.035}, 0.20);
  EXPECT_GE(std::stod(old.stages[2][4]), std::stod(old.stages[1][5])); // after its parent
  EXPECT_EQ(old.stages[2][7], "yes");
  EXPECT_EQ(old.metrics["failed_jobs"].get<double>(), 1);
  EXPECT_EQ(old.metrics["failed_task_attempts"].get<double>(), 1);
  EXPECT_NEAR(std::stod(old.apps[0][4]) / 9.011, 1.0, 0.05);
  // Ten failed attempts hold slots and send their tasks back: the stage (0.909 s recorded) and the application
  // (101.8 s, most of it the driver's after the job) as recorded.
  const auto failing = spark_run(replay_scenario("failing", "app-20161115172038-0000", 4, 4, "").string());
  expect_stages_within(failing, {0.909}, 0.20);
  EXPECT_EQ(failing.metrics["failed_task_attempts"].get<double>(), 10);
  EXPECT_EQ(failing.metrics["tasks"].get<double>(), 16);
  EXPECT_NEAR(std::stod(failing.apps[0][4]) / 101.795, 1.0, 0.05);
  // Jobs 1 and 2 of the YARN log ran side by side: 62.17 s recorded (run one after the other: 72.8 s). Its executors
  // registered 10.3-11.1 s after the start, as replayed; with executor_waits: startup, at once.
  const auto yarn = spark_run(src("scenarios/reference/spark-replay-yarn.yaml"));
  ASSERT_EQ(yarn.code, 0) << yarn.err;
  EXPECT_NEAR(std::stod(yarn.apps[0][4]) / 62.168, 1.0, 0.10);
  EXPECT_LT(std::stod(yarn.stages[2][4]), std::stod(yarn.stages[1][5])); // beside stage 1
  EXPECT_NEAR(std::stod(yarn.apps[0][2]), 10.310, 1e-6);
  const auto printed = cs::testing::run_clustersim("run " + src("scenarios/reference/spark-replay-yarn.yaml") +
                                                   " --out " + fresh_dir("printed").string());
  EXPECT_EQ(printed.out.find("0 reads"), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find("the logs read persisted RDDs 4 times, 0 from memory"), std::string::npos)
      << printed.out;
  const auto at_once = spark_run(
      replay_scenario("startup", "application_1553914137147_0018", 3, 1, ", executor_waits: startup").string());
  ASSERT_EQ(at_once.code, 0) << at_once.err;
  EXPECT_NEAR(std::stod(at_once.apps[0][2]), 0.0, 1e-9);
}

void expect_refused(const std::string& scenario, const std::string& extra, const std::string& message)
{
  const fs::path dir = fresh_dir("refused");
  auto r = cs::testing::run_clustersim("run " + scenario + " --quiet " + extra + " --out " + dir.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(^\S+:\d+:\d+: )"))) << r.err; // file:line:col
  EXPECT_FALSE(fs::exists(dir)) << "written on error";
  fs::remove_all(dir);
}

TEST(SparkRun, BadInputIsRefusedWithAPosition)
{
  const std::string s = src("scenarios/spark-hibench.yaml");
  expect_refused(s, "--set workload.spark.executor_cores=64", "fits on no host");
  expect_refused(s, "--set workload.spark.executor_memory=80GiB", "fits on no host");
  expect_refused(s, "--set workload.spark.executor_memory=200MiB", "reserved_memory");
  expect_refused(s, "--set policies.spark_cache=arc", "unknown spark_cache policy");
  expect_refused(s, "--set 'policies.spark_cache={name: imlayer, eviction: fifo}'", "fifo");
  expect_refused(s, "--set policies.spark_provisioning=elastic", "unknown spark_provisioning policy");
  expect_refused(s, "--set backend=analytical --set cluster.network.model=lv08", "network.model ideal");
  const auto bad_app = std::string("name: t\n") + kCluster + R"(workload:
  kind: spark
  spark:
    applications: [{workload: kmeans, event_log: x}]
)";
  expect_refused(scenario_file("both", bad_app).string(), "", "either a workload generator or an event_log");
  expect_refused(s, "--set 'workload.spark.applications[0].executor_waits=startup'", "event-log replays only");
  expect_refused(src("scenarios/reference/spark-replay-yarn.yaml"),
                 "--set 'workload.spark.applications[0].executor_waits=never'", "executor_waits");
  const fs::path dir = fresh_dir("trunc");
  fs::create_directories(dir);
  std::ifstream in(src("traces/samples/spark/local-1430917381534"));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::ofstream(dir / "log") << text.substr(0, text.size() / 2);
  std::ofstream(dir / "s.yaml") << std::string("name: t\n") + kCluster +
                                       "workload: {kind: spark, spark: {applications: [{event_log: log}]}}\n";
  const fs::path out = fresh_dir("trunc_out");
  auto r = cs::testing::run_clustersim("run " + (dir / "s.yaml").string() + " --quiet --out " + out.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find((dir / "log").string() + ":"), std::string::npos) << r.err; // the log's line
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

} // namespace

namespace {

TEST(SparkRun, StandaloneExecutorsNeedNoContainerOverhead)
{
  // 60 GiB heaps on 64 GiB hosts: a YARN container adds 6 GiB of overhead and fits nowhere; a standalone worker
  // starts the JVM with its heap alone.
  const std::string s = src("scenarios/spark-hibench.yaml");
  expect_refused(s, "--set workload.spark.executor_memory=60GiB", "fits on no host");
  const auto r =
      spark_run(s, "--set workload.spark.executor_memory=60GiB --set workload.spark.manager=standalone", "sa");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.metrics["applications"].get<double>(), 4);
  expect_refused(s, "--set workload.spark.manager=mesos", "manager");
}

} // namespace

namespace {

TEST(SparkTraceCommand, ListsTheCacheEvictionsBesideThePolicies)
{
  const auto list = cs::testing::run_clustersim("list policies");
  EXPECT_EQ(list.code, 0) << list.err;
  const auto at = list.out.find("spark_cache eviction");
  ASSERT_NE(at, std::string::npos) << list.out;
  for (const char* eviction : {"lru", "lrc", "mrd"})
    EXPECT_NE(list.out.find(std::string("  ") + eviction + " ", at), std::string::npos) << eviction;
}

TEST(SparkTraceCommand, SummarisesPlainAndRollingLogsAndDetectsTheFormat)
{
  const auto plain = cs::testing::run_clustersim("trace " + src("traces/samples/spark/local-1430917381534"));
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("110 tasks"), std::string::npos) << plain.out;
  const fs::path dir = fresh_dir("rolling") / "eventlog_v2_local-1430917381534";
  fs::create_directories(dir);
  std::ifstream in(src("traces/samples/spark/local-1430917381534"));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto cut = text.find('\n', text.size() / 3) + 1;
  std::ofstream(dir / "events_1_local-1430917381534") << text.substr(0, cut);
  std::ofstream(dir / "events_2_local-1430917381534") << text.substr(cut);
  const auto rolled = cs::testing::run_clustersim("trace " + dir.string());
  EXPECT_EQ(rolled.code, 0) << rolled.err;
  EXPECT_NE(rolled.out.find("110 tasks"), std::string::npos) << rolled.out;
  fs::remove_all(dir.parent_path());
  // A log with no end event has no duration of -1.0 s (once printed): it says so and when its last task ended.
  const auto open = cs::testing::run_clustersim("trace " + src("traces/samples/spark/eventlog_2nodes_8cores"));
  EXPECT_EQ(open.code, 0) << open.err;
  EXPECT_EQ(open.out.find("-1.0 s"), std::string::npos) << open.out;
  EXPECT_NE(open.out.find("no end event (still running when the log was copied; its last task ended at"),
            std::string::npos)
      << open.out;
}

} // namespace

namespace {

TEST(SparkRun, AnApplicationStillRunningWhenItsLogWasCopiedReplaysWhatCompleted)
{
  // Once exit 134 (std::out_of_range from map::at in use_execution_memory) on two hosts or more: the log's last job
  // never ends, its stages never complete, and tasks still ran when the application was taken to be over.
  const fs::path dir = fresh_dir("inprogress");
  fs::create_directories(dir);
  std::ofstream(dir / "s.yaml") << "name: t\ncluster:\n  device: cpu-node\n  racks: 1\n  hosts_per_rack: 2\n"
                                   "  host: {cores: 8, memory: 16GiB, disk_bandwidth: 500MB/s}\n"
                                   "  network: {kind: tree, host_link: 10Gb/s, latency: 50us}\n"
                                   "workload: {kind: spark, spark: {executor_cores: 8, executor_memory: 4GiB, "
                                   "replication: 1, applications: [{event_log: "
                                << src("traces/samples/spark/eventlog_2nodes_8cores") << "}]}}\n";
  for (const char* backend : {"simgrid", "analytical"}) {
    const fs::path out = fresh_dir(std::string("inprogress_out_") + backend);
    auto r = cs::testing::run_clustersim("run " + (dir / "s.yaml").string() + " --quiet --backend " + backend +
                                         " --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("1 job(s) never ended; 9 task(s) of 2 stage(s) that never completed are left out"),
              std::string::npos)
        << r.err;
    std::ifstream in(out / "report.json");
    const auto report = nlohmann::json::parse(in);
    EXPECT_EQ(report["metrics"]["applications"].get<double>(), 1);
    EXPECT_EQ(report["warnings"].size(), 1u);
    fs::remove_all(out);
  }
  fs::remove_all(dir);
}

} // namespace
