// GPU-cluster jobs: the trace readers (three formats, malformed rows refused at their column), the queue and
// placement policies on hand-made states, and the replay's invariants and orderings through the command line.
#include "base/input_error.hpp"
#include "base/registry.hpp"
#include "policies/cluster/cluster_scheduling.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"
#include "traces/gpu_job_trace.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace cs;

namespace {

using cs::testing::src;
using cs::testing::write_temp;

void expect_refused(const std::string& text, int line, int column, const std::string& words)
{
  const fs::path p = write_temp("bad.csv", text);
  GpuTraceSummary s;
  try {
    read_gpu_trace("auto", p.string(), s);
    ADD_FAILURE() << "accepted: " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), line) << e.where();
    EXPECT_EQ(e.column(), column) << e.where();
    EXPECT_NE(e.where().find(words), std::string::npos) << e.where();
  }
  fs::remove(p);
}

// A cluster of `nodes` x 4 GPUs, two nodes per rack, with `used` GPUs taken.
ClusterGpus cluster(int nodes, const std::set<int>& used = {})
{
  ClusterGpus c;
  c.gpus_per_node = 4;
  c.free_milli.assign(static_cast<std::size_t>(nodes * 4), 1000);
  c.free_whole.assign(static_cast<std::size_t>(nodes), 4);
  for (int n = 0; n < nodes; ++n)
    c.rack_of_node.push_back(n / 2);
  for (int g : used) {
    c.free_milli[g] = 0;
    --c.free_whole[g / 4];
  }
  return c;
}

std::set<int> nodes_of(const std::vector<int>& gpus)
{
  std::set<int> n;
  for (int g : gpus)
    n.insert(g / 4);
  return n;
}

std::unique_ptr<GangPlacement> placement(const std::string& name)
{
  return Registry<GangPlacement>::instance().create(name);
}

// A view over free GPUs only (placement ignored), with running jobs' ends for backfill.
struct CountingView : ClusterQueueView {
  int free = 0;
  std::vector<RunningJob> ends;
  std::vector<int> started;
  double now() const override { return 0; }
  int total_gpus() const override { return 16; }
  int free_gpus() const override { return free; }
  const std::vector<RunningJob>& running() const override { return ends; }
  bool try_start(const QueuedJob& j) override
  {
    if (j.gpus > free)
      return false;
    free -= j.gpus;
    started.push_back(j.id);
    return true;
  }
};

std::vector<int> schedule(const std::string& name, const std::vector<QueuedJob>& queue, CountingView& view)
{
  auto s = Registry<JobScheduler>::instance().create(name);
  s->schedule(queue, view);
  return view.started;
}

nlohmann::json metrics(const std::string& sets)
{
  static int n = 0;
  const fs::path dir = fs::temp_directory_path() / ("cs_gj_" + std::to_string(::getpid()) + "_" + std::to_string(++n));
  auto r = cs::testing::run_clustersim("run " + src("scenarios/gpu-jobs-philly.yaml") + " --quiet --out " +
                                       dir.string() + " " + sets);
  EXPECT_EQ(r.code, 0) << sets << "\n" << r.err;
  std::ifstream in(dir / "report.json");
  auto report = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(dir);
  return report.is_discarded() ? nlohmann::json::object() : report["metrics"];
}

} // namespace

TEST(GpuJobTraces, EachFormatIsReadAndUnrunnableRowsCounted)
{
  GpuTraceSummary s;
  const auto philly = read_gpu_trace("auto", src("traces/samples/gpu-jobs/philly-first-3000.csv"), s);
  EXPECT_EQ(s.format, "philly");
  ASSERT_EQ(philly.size(), 3000u);
  EXPECT_EQ(philly[0].gpus, 1);
  EXPECT_DOUBLE_EQ(philly[0].duration_s, 66.0);
  EXPECT_DOUBLE_EQ(philly[1].submit_s - philly[0].submit_s, -(48 * 60 + 52.0)); // 07:01:55 then 06:13:03
  const auto openb = read_gpu_trace("auto", src("traces/samples/gpu-jobs/openb-pods-first-1500.csv"), s);
  EXPECT_EQ(s.format, "openb");
  EXPECT_EQ(long(openb.size()) + s.skipped, 1500);
  EXPECT_GT(s.skip_reasons["uses no GPU"], 0);
  EXPECT_EQ(openb[1].gpu_milli, 460);
  const auto tiresias = read_gpu_trace("auto", src("traces/samples/gpu-jobs/60_job.csv"), s);
  EXPECT_EQ(s.format, "tiresias");
  ASSERT_EQ(tiresias.size(), 60u);
  EXPECT_EQ(tiresias[1].gpus, 8);
  EXPECT_EQ(tiresias[1].group, "vgg11");
}

TEST(GpuJobTraces, MalformedRowsAreRefusedAtTheirColumn)
{
  const std::string philly = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  expect_refused(philly + "2017-10-09 07:01:55,66.0,1,66.0,a\n2017-10-09 07:01:55,fast,1,1,a\n", 3, 21, "duration");
  expect_refused(philly + "2017-13-09 07:01:55,66.0,1,66.0,a\n", 2, 1, "not a timestamp");
  expect_refused(philly + "2017-10-09 07:01:55,66.0,0,66.0,a\n", 2, 26, "num_gpus");
  expect_refused(philly + "2017-10-09 07:01:55,66.0\n", 2, 25, "missing field 'num_gpus'");
  expect_refused("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1,-5,1,m,1,1\n", 2, 5,
                 "submit_time");
  expect_refused("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                 "scheduled_time\np,1,1,1,1500,,LS,Running,0,10,0\n",
                 2, 9, "gpu_milli");
  expect_refused("a,b,c\n1,2,3\n", 1, 1, "not a GPU job trace");
  expect_refused("", 1, 1, "not a GPU job trace");
}

TEST(GangPlacements, ConsolidatedSpreadAndTopologyAwareChooseAsDocumented)
{
  // Node 0 has 1 GPU free, node 1 has 3, nodes 2-3 are free.
  const ClusterGpus c = cluster(4, {0, 1, 2, 4});
  EXPECT_EQ(nodes_of(placement("consolidated")->place(c, 3)), (std::set<int>{1})); // best fit: node 1, not a free node
  EXPECT_EQ(nodes_of(placement("consolidated")->place(c, 6)).size(), 2u);
  EXPECT_EQ(nodes_of(placement("spread")->place(c, 4)).size(), 4u); // one per node
  EXPECT_TRUE(placement("consolidated")->place(c, 13).empty());     // 12 GPUs free
  // Six GPUs: rack 1 (nodes 2-3, 8 free) holds them alone; consolidated would take the freest nodes (2, 3) too.
  const auto topo = placement("topology-aware")->place(c, 6);
  EXPECT_EQ(nodes_of(topo), (std::set<int>{2, 3}));
  // Five GPUs with rack 1 half used: rack 0 (4 free) cannot hold them, rack 1 (5 free) can.
  const ClusterGpus d = cluster(4, {0, 1, 2, 3, 8, 9, 10});
  EXPECT_EQ(nodes_of(placement("topology-aware")->place(d, 5)), (std::set<int>{2, 3}));
}

TEST(QueuePolicies, FifoBlocksSjfOvertakesBackfillDoesNotDelayTheHead)
{
  const std::vector<QueuedJob> queue{{0, 0, 8, 1000, 100}, {1, 1, 2, 1000, 10}, {2, 2, 2, 1000, 500}};
  CountingView fifo;
  fifo.free = 4;
  EXPECT_TRUE(schedule("fifo", queue, fifo).empty()); // the 8-GPU head blocks
  CountingView sjf;
  sjf.free = 4;
  EXPECT_EQ(schedule("sjf", queue, sjf), (std::vector<int>{1, 2}));
  // The head needs 8; 4 free now and 4 more at t = 50: job 1 (10 s) ends before that and may jump ahead; job 2
  // (500 s) would hold 2 of the head's GPUs past t = 50 and must wait.
  CountingView easy;
  easy.free = 4;
  easy.ends = {{4, 1000, 50}};
  EXPECT_EQ(schedule("backfill", queue, easy), (std::vector<int>{1}));
}

TEST(GpuJobsReplay, BetterQueuesWaitLessAndSpreadingSlowsGangs)
{
  const auto fifo = metrics("");
  const auto sjf = metrics("--set policies.cluster=sjf");
  const auto easy = metrics("--set policies.cluster=backfill");
  const auto spread = metrics("--set policies.placement=spread");
  EXPECT_LT(sjf.value("mean_queueing_delay_s", 0.0), fifo.value("mean_queueing_delay_s", 0.0));
  EXPECT_LT(easy.value("mean_queueing_delay_s", 0.0), fifo.value("mean_queueing_delay_s", 0.0));
  EXPECT_GT(spread.value("mean_placement_slowdown", 0.0), fifo.value("mean_placement_slowdown", 0.0));
  EXPECT_GT(spread.value("fragmentation", 0.0), fifo.value("fragmentation", 0.0));
  // Spreading puts a gang one GPU per node over every node with free GPUs; it stays on one node only when that node
  // alone has room at the time (how often depends on the job times), where consolidating crosses nodes far less.
  EXPECT_GT(spread.value("multi_node_share", 0.0), 0.95);
  EXPECT_GT(spread.value("multi_node_share", 0.0), fifo.value("multi_node_share", 0.0) + 0.5);
  EXPECT_EQ(fifo.value("jobs", 0.0), 3000.0);
}

TEST(GpuJobsReplay, OnAnIdleClusterJobsRunAtOnceForTheirRecordedTime)
{
  // The Tiresias example on 8 nodes of 8: every job fits at once on one node.
  const fs::path dir = fs::temp_directory_path() / ("cs_gj_idle_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "s.yaml") << "name: idle\ncluster: {device: v100-sxm2, nodes: 8, gpus_per_node: 8, network: "
                                   "{nics_per_node: 1}}\nworkload: {kind: gpu-jobs, model: {dtype: fp16}, "
                                   "trace: {file: "
                                << src("traces/samples/gpu-jobs/60_job.csv") << "}}\n";
  auto r = cs::testing::run_clustersim("run " + (dir / "s.yaml").string() + " --quiet --out " + (dir / "o").string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(dir / "o" / "report.json");
  const auto m = nlohmann::json::parse(in)["metrics"];
  EXPECT_DOUBLE_EQ(m["mean_queueing_delay_s"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(m["mean_placement_slowdown"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m["multi_node_share"].get<double>(), 0.0);
  // Mean JCT = mean recorded duration of the 60 jobs.
  GpuTraceSummary s;
  double sum = 0;
  for (const auto& j : read_gpu_trace("tiresias", src("traces/samples/gpu-jobs/60_job.csv"), s))
    sum += j.duration_s;
  EXPECT_NEAR(m["mean_jct_s"].get<double>(), sum / 60, 1e-9);
  fs::remove_all(dir);
}

TEST(GpuJobsReplay, BadInputIsRefusedWithAPosition)
{
  auto r = cs::testing::run_clustersim("run " + src("scenarios/gpu-jobs-philly.yaml") +
                                       " --quiet --out /tmp/cs_gj_never --set workload.trace.arrival_scale=0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("arrival_scale must be in"), std::string::npos) << r.err;
  r = cs::testing::run_clustersim("run " + src("scenarios/gpu-jobs-philly.yaml") +
                                  " --quiet --out /tmp/cs_gj_never --set policies.placement=random");
  EXPECT_EQ(r.code, 2);
  const fs::path bad = write_temp("bad-trace.csv", "timestamp,duration,num_gpus,gpu_time,cluster\nx,1,1,1,a\n");
  r = cs::testing::run_clustersim("run " + src("scenarios/gpu-jobs-philly.yaml") +
                                  " --quiet --out /tmp/cs_gj_never --set workload.trace.file=" + bad.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(bad.string() + ":2:1:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists("/tmp/cs_gj_never"));
  fs::remove(bad);
  // A bound is where a run ends in bounded time: a million Philly jobs on 256 GPUs did not end in 300 s.
  r = cs::testing::run_clustersim("run " + src("scenarios/gpu-jobs-philly.yaml") +
                                  " --quiet --out /tmp/cs_gj_never --set workload.trace.limit=300000");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("must be at most 200000"), std::string::npos) << r.err;
  std::string many = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n";
  for (int i = 0; i <= 200000; ++i)
    many += std::to_string(i) + ",1," + std::to_string(i) + ",10,vgg19,60,1\n";
  const fs::path big = write_temp("many-jobs.csv", many);
  r = cs::testing::run_clustersim("run " + src("scenarios/gpu-jobs-philly.yaml") +
                                  " --quiet --out /tmp/cs_gj_never --set workload.trace.file=" + big.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("more than 200000 jobs, the most one run replays"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists("/tmp/cs_gj_never"));
  fs::remove(big);
}

TEST(GpuJobTraces, TheTraceCommandTellsEveryFormatApart)
{
  const std::vector<std::pair<std::string, std::string>> files{
      {"traces/samples/gpu-jobs/philly-first-3000.csv", "(philly): 3000 jobs, 0 skipped"},
      {"traces/samples/gpu-jobs/openb-pods-first-1500.csv", "(openb): 1187 jobs, 313 skipped"},
      {"traces/samples/gpu-jobs/60_job.csv", "(tiresias): 60 jobs"},
      {"traces/samples/kineto/nccl_data.json.gz", "(kineto): rank 0 of 2"},
      {"traces/samples/hadoop/gridmix-wordcount-rumen.json", "(rumen): 1 jobs read"}};
  for (const auto& [file, words] : files) {
    auto r = cs::testing::run_clustersim("trace " + src(file));
    EXPECT_EQ(r.code, 0) << file << r.err;
    EXPECT_NE(r.out.find(words), std::string::npos) << r.out;
  }
  auto r = cs::testing::run_clustersim("trace " + src("traces/samples/gpu-jobs/60_job.csv") + " --format philly");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("60_job.csv:1:1: a philly header needs a column 'timestamp'"), std::string::npos) << r.err;
}

namespace {

// Where reading `text` (written to a temporary file `name`) as a GPU job trace is refused, or "read".
std::string gpu_trace_refusal(const std::string& name, const std::string& text)
{
  try {
    cs::GpuTraceSummary s;
    cs::read_gpu_trace("auto", cs::testing::write_temp(name, text).string(), s);
  } catch (const cs::InputError& e) {
    return e.where();
  }
  return "read";
}

} // namespace

TEST(GpuJobTraces, CsvColumnsAreReadByNameInAnyOrder)
{
  // The Tiresias sample with its columns shuffled (once: the duration was read from another column, exit 0).
  std::ifstream in(src("traces/samples/gpu-jobs/60_job.csv"));
  std::string line, shuffled;
  const int order[] = {2, 0, 5, 4, 1, 6, 3}; // submit_time, job_id, duration, model_name, num_gpu, interval, iterations
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');)
      f.push_back(x);
    for (int i = 0; i < 7; ++i)
      shuffled += f[order[i]] + (i < 6 ? "," : "\n");
  }
  const auto path = cs::testing::write_temp("tiresias-shuffled.csv", shuffled);
  cs::GpuTraceSummary a, b;
  const auto original = cs::read_gpu_trace("auto", src("traces/samples/gpu-jobs/60_job.csv"), a);
  const auto reordered = cs::read_gpu_trace("auto", path.string(), b);
  ASSERT_EQ(original.size(), reordered.size());
  for (std::size_t i = 0; i < original.size(); ++i) {
    EXPECT_EQ(original[i].duration_s, reordered[i].duration_s) << i;
    EXPECT_EQ(original[i].submit_s, reordered[i].submit_s) << i;
    EXPECT_EQ(original[i].gpus, reordered[i].gpus) << i;
    EXPECT_EQ(original[i].group, reordered[i].group) << i;
  }
  EXPECT_EQ(b.unread_columns, (std::vector<std::string>{"interval", "iterations"}));
  // A header without a column the format reads, or with a name twice, is refused at line 1.
  const auto refused = gpu_trace_refusal;
  EXPECT_NE(refused("no-duration.csv", "job_id,num_gpu,submit_time,model_name\n0,1,0,vgg\n")
                .find(":1:1: a tiresias header needs a column 'duration'"),
            std::string::npos);
  EXPECT_NE(refused("twice.csv", "job_id,num_gpu,submit_time,model_name,duration,duration\n0,1,0,vgg,5,6\n")
                .find(":1:48: column 'duration' appears twice in the header"),
            std::string::npos)
      << refused("twice.csv", "job_id,num_gpu,submit_time,model_name,duration,duration\n0,1,0,vgg,5,6\n");
  EXPECT_NE(refused("unknown.csv", "id,gpus,start\n0,1,0\n").find("columns in any order"), std::string::npos);
}

TEST(GpuJobTraces, ImpossibleDatesHexNumbersAndFractionalCountsAreRefused)
{
  const auto where = gpu_trace_refusal;
  const std::string philly = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  EXPECT_NE(
      where("feb31.csv", philly + "2017-02-31 00:00:00,60,1,60,c1\n").find(":2:1: '2017-02-31 00:00:00' is not a date"),
      std::string::npos);
  EXPECT_EQ(where("feb29.csv", philly + "2016-02-29 00:00:00,60,1,60,c1\n"), "read"); // a leap year
  EXPECT_NE(where("hex.csv", philly + "2017-10-09 07:01:55,0x10,1,16,c1\n").find(":2:21: '0x10' is not a valid"),
            std::string::npos);
  EXPECT_NE(where("half.csv", philly + "2017-10-09 07:01:55,60,1.5,90,c1\n").find(":2:24: '1.5' is not a whole"),
            std::string::npos);
}

TEST(GpuJobsReplay, ARecordedDeviceRescalesRunTimesToTheClustersGpu)
{
  const auto v100 = metrics("--set workload.recorded_device=v100-sxm2");
  const auto a100 = metrics("--set workload.recorded_device=v100-sxm2 --set cluster.device=a100-sxm4-40gb "
                            "--set cluster.intra_node.kind=nvswitch");
  EXPECT_DOUBLE_EQ(v100.value("mean_jct_s", 0.0), metrics("").value("mean_jct_s", -1.0)); // same GPU: as recorded
  EXPECT_LT(a100.value("mean_jct_s", 0.0), 0.8 * v100.value("mean_jct_s", 0.0));          // a faster GPU
  auto r = cs::testing::run_clustersim("validate " + src("scenarios/gpu-jobs-philly.yaml") +
                                       " --set workload.recorded_device=tpu-v9");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is not a catalog GPU"), std::string::npos) << r.err;
}

TEST(GpuJobsCapacity, TheCheapestClusterMeetingAQueueingTargetIsFound)
{
  const fs::path out = fs::temp_directory_path() / ("cs_gjcap_" + std::to_string(::getpid()));
  fs::remove_all(out);
  auto r = cs::testing::run_clustersim(
      "plan-capacity " + src("scenarios/gpu-jobs-philly.yaml") +
      " --target 'p95_wait_hours<=48' --devices v100-sxm2 --price v100-sxm2=1.5 --min-gpus 128 --max-gpus 1024 "
      "--out " +
      out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cheapest meeting the target: 512 x v100-sxm2"), std::string::npos) << r.out;
  std::ifstream csv(out / "frontier.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("device,gpus,nics_per_node,oversubscription,ran,", 0), 0u) << header;
  EXPECT_TRUE(fs::exists(out / "frontier.png"));
  fs::remove_all(out);
  // A training target for a job trace, and the other way round, are refused before anything runs.
  r = cs::testing::run_clustersim("plan-capacity " + src("scenarios/gpu-jobs-philly.yaml") +
                                  " --target 'time_to_train_days<=3' --devices v100-sxm2 --price v100-sxm2=1.5");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("a job trace takes"), std::string::npos) << r.err;
  r = cs::testing::run_clustersim("plan-capacity " + src("scenarios/quickstart.yaml") +
                                  " --target 'p95_wait_hours<=3' --tokens 1e9");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("a training scenario takes"), std::string::npos) << r.err;
}

TEST(GpuJobTraces, GzipCompressedTracesReadAsThePlainFile)
{
  GpuTraceSummary whole, first;
  const auto all = read_gpu_trace("auto", src("traces/samples/gpu-jobs/philly.csv.gz"), whole);
  const auto head = read_gpu_trace("auto", src("traces/samples/gpu-jobs/philly-first-3000.csv"), first);
  EXPECT_EQ(whole.format, "philly");
  ASSERT_EQ(all.size(), 82247u);
  for (std::size_t i = 0; i < head.size(); ++i) {
    EXPECT_EQ(all[i].submit_s, head[i].submit_s) << i;
    EXPECT_EQ(all[i].duration_s, head[i].duration_s) << i;
    EXPECT_EQ(all[i].gpus, head[i].gpus) << i;
  }
  const fs::path bad = write_temp("cut.csv.gz", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03garbage", 17));
  GpuTraceSummary s;
  EXPECT_THROW(read_gpu_trace("philly", bad.string(), s), InputError);
  fs::remove(bad);
}
