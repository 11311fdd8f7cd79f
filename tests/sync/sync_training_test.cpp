// sync-training through the command line: the partial-reduce rows of validation.md §4 and an SDPipe scenario over
// three seeds, the schemes' invariants (closed forms without stragglers, ps-ssp's bound, a fail-slow GPU), recorded
// step times, determinism, and bad input refused with a position and nothing written.
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

using cs::testing::fresh_dir;
using cs::testing::src;

/** report.json of `scenario` with `sets` (each "key=value"). */
nlohmann::json report_of(const std::string& scenario, const std::vector<std::string>& sets, const std::string& extra)
{
  static int count = 0;
  const fs::path dir = fresh_dir(std::to_string(++count));
  std::string args = "run " + src(scenario) + " --quiet " + extra + " --out " + dir.string();
  for (const auto& s : sets)
    args += " --set '" + s + "'";
  auto r = cs::testing::run_clustersim(args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  std::ifstream in(dir / "report.json");
  nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(dir);
  return report.is_discarded() ? nlohmann::json::object() : report;
}

/** report.json's metrics of `scenario` with `sets`. */
nlohmann::json run(const std::string& scenario, const std::vector<std::string>& sets, const std::string& extra = "")
{
  return report_of(scenario, sets, extra).value("metrics", nlohmann::json::object());
}

/** A folder with steps.csv (`rows`) and s.yaml: 4 A100s of one node replaying it under all-reduce. */
fs::path trace_scenario(const std::string& tag, const std::string& rows)
{
  const fs::path dir = fresh_dir(tag);
  fs::create_directories(dir);
  std::ofstream(dir / "steps.csv") << rows;
  std::ofstream(dir / "s.yaml") << "name: t\ncluster: {device: a100-sxm4-40gb, nodes: 1, gpus_per_node: 4, "
                                   "network: {nics_per_node: 4}, stragglers: {step_times: steps.csv}}\n"
                                   "workload: {kind: sync-training, model: {preset: bert-large}, batch: {global: 64, "
                                   "micro: 16}, steps: 4}\n";
  return dir;
}

double metric(const nlohmann::json& m, const char* key) { return m.value(key, -1.0); }

const char* kStragglers = "scenarios/stragglers.yaml";

std::string seed(int s) { return "--seed " + std::to_string(s); }

} // namespace

class PartialReduceRows : public ::testing::TestWithParam<int> {};

TEST_P(PartialReduceRows, FasterThanAllReduceWithStragglersAndEvenWithout)
{
  const auto ar = run(kStragglers, {"policies.sync_scheme=allreduce"}, seed(GetParam()));
  const auto pr = run(kStragglers, {}, seed(GetParam()));
  EXPECT_GE(metric(pr, "samples_per_s") / metric(ar, "samples_per_s"), 1.2);
  const auto ar0 =
      run(kStragglers, {"policies.sync_scheme=allreduce", "cluster.stragglers.random.probability=0"}, seed(GetParam()));
  const auto pr0 = run(kStragglers, {"cluster.stragglers.random.probability=0"}, seed(GetParam()));
  EXPECT_NEAR(metric(pr0, "samples_per_s") / metric(ar0, "samples_per_s"), 1.0, 0.10);
}

TEST_P(PartialReduceRows, SdpipeBeatsSynchronousPipelinesWithStragglers)
{
  const char* sd = "scenarios/reference/sdpipe-bert.yaml";
  const auto pipe = run(sd, {}, seed(GetParam()));
  const auto sync = run(sd, {"policies.sync_scheme=allreduce"}, seed(GetParam()));
  EXPECT_GE(metric(pipe, "samples_per_s") / metric(sync, "samples_per_s"), 1.2);
  const auto pipe0 = run(sd, {"cluster.stragglers.random.probability=0"}, seed(GetParam()));
  const auto sync0 =
      run(sd, {"policies.sync_scheme=allreduce", "cluster.stragglers.random.probability=0"}, seed(GetParam()));
  EXPECT_NEAR(metric(pipe0, "samples_per_s") / metric(sync0, "samples_per_s"), 1.0, 0.10);
}

INSTANTIATE_TEST_SUITE_P(Seeds, PartialReduceRows, ::testing::Values(1, 2, 3));

TEST(SyncTraining, WithoutStragglersSchemesMeetTheirClosedForms)
{
  // Eight replicas, so that a partial-reduce group of all of them is one group (above 8 it would run as pairs).
  const std::vector<std::string> calm{"cluster.stragglers.random.probability=0", "workload.steps=20",
                                      "workload.parallel.dp=8"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), calm.begin(), calm.end());
    return more;
  };
  const auto ar = run(kStragglers, with({"policies.sync_scheme=allreduce"}), "--backend analytical");
  const auto ar_flows = run(kStragglers, with({"policies.sync_scheme=allreduce"}));
  // Every replica waits for none: a step is the compute plus one all-reduce; the flows agree with the closed form.
  EXPECT_NEAR(metric(ar_flows, "iteration_time_s") / metric(ar, "iteration_time_s"), 1.0, 0.01);
  EXPECT_DOUBLE_EQ(metric(ar, "mean_staleness"), 0.0);
  EXPECT_DOUBLE_EQ(metric(ar, "mean_group_size"), 8.0);
  for (const char* same : {"policies.sync_scheme=eager-sgd", "policies.sync_scheme={name: eager-sgd, mode: solo}",
                           "policies.sync_scheme={name: partial-reduce, group_size: 8, ssp_bound: 0}"}) {
    const auto m = run(kStragglers, with({same}), "--backend analytical");
    EXPECT_DOUBLE_EQ(metric(m, "iteration_time_s"), metric(ar, "iteration_time_s")) << same;
  }
  // Parameter servers: bulk-synchronous updates hold every gradient of a step; the stale-synchronous server, whose
  // workers need not push and pull all at once, is never slower.
  const auto bsp = run(kStragglers, with({"policies.sync_scheme=ps-bsp"}), "--backend analytical");
  const auto ssp = run(kStragglers, with({"policies.sync_scheme=ps-ssp"}), "--backend analytical");
  EXPECT_DOUBLE_EQ(metric(bsp, "mean_group_size"), 8.0);
  EXPECT_DOUBLE_EQ(metric(bsp, "mean_staleness"), 0.0);
  EXPECT_LE(metric(ssp, "iteration_time_s"), metric(bsp, "iteration_time_s"));
}

// One node of 8 GPUs (every pair of GPUs alike), one server on GPU 0, analytical: a gossip step is the compute plus
// one model over a GPU's link (x). Under ps-bsp the 7 remote pushes of the first step queue at the server's link
// (the update at c + 7x); then the pulls queue, so worker j is back at its next push jx later and pushes without
// queueing: every later update comes c + 8x after the one before. Ten steps: 10 c + 79 x, latencies apart.
TEST(SyncTraining, ServersAndGossipMeetTheirClosedForms)
{
  const std::vector<std::string> node{"cluster.nodes=1", "workload.parallel.dp=8", "workload.servers=1",
                                      "cluster.stragglers.random.probability=0", "workload.steps=10"};
  auto with = [&](const std::string& scheme) {
    auto sets = node;
    sets.push_back("policies.sync_scheme=" + scheme);
    return report_of(kStragglers, sets, "--backend analytical");
  };
  const auto gossip = with("ad-psgd"), servers = with("ps-bsp");
  const double compute = gossip["breakdown"].value("step_compute_s", -1.0);
  ASSERT_GT(compute, 0);
  const double x = metric(gossip["metrics"], "iteration_time_s") - compute;
  const double ps = metric(servers["metrics"], "iteration_time_s") - compute;
  EXPECT_GT(x, 0);
  EXPECT_NEAR(ps / x, 7.9, 0.01);
  EXPECT_DOUBLE_EQ(metric(gossip["metrics"], "mean_group_size"), 2.0);
}

TEST(SyncTraining, StaleSynchronousServersNeverExceedTheirBound)
{
  const std::vector<std::string> slow{"cluster.stragglers.slow=[{devices: [5], factor: 0.3}]", "workload.steps=40"};
  auto ssp = slow, asp = slow;
  ssp.push_back("policies.sync_scheme={name: ps-ssp, staleness: 2}");
  asp.push_back("policies.sync_scheme=ps-asp");
  const auto bounded = run(kStragglers, ssp);
  EXPECT_LE(metric(bounded, "max_clock_gap"), 2);
  EXPECT_GE(metric(bounded, "max_clock_gap"), 1);
  EXPECT_GT(metric(run(kStragglers, asp), "max_clock_gap"), 2); // without the bound the fast ones run ahead
}

TEST(SyncTraining, AFailSlowGpuSlowsAllReduceByItsFactorAndPartialReduceByFarLess)
{
  const std::vector<std::string> calm{"cluster.stragglers.random.probability=0", "workload.steps=30"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), calm.begin(), calm.end());
    return more;
  };
  const std::string slow = "cluster.stragglers.slow=[{devices: [3], factor: 0.25}]";
  const double ar = metric(run(kStragglers, with({"policies.sync_scheme=allreduce"})), "iteration_time_s");
  const double ar_slow = metric(run(kStragglers, with({"policies.sync_scheme=allreduce", slow})), "iteration_time_s");
  const double pr = metric(run(kStragglers, with({})), "iteration_time_s");
  const double pr_slow = metric(run(kStragglers, with({slow})), "iteration_time_s");
  EXPECT_GT(ar_slow / ar, 3.0); // the step's compute is four times longer on the slow GPU, and everyone waits
  // Partial-reduce leaves the slow GPU out of most groups; only the merges every ssp_bound x N updates wait for it.
  EXPECT_LT(pr_slow / pr, 0.5 * ar_slow / ar);
}

TEST(SyncTraining, RecordedStepTimesReplacePredictedOnes)
{
  const fs::path dir = trace_scenario("trace", "worker,step,seconds\n0,0,1.5\n0,1,0.5\n");
  auto r = cs::testing::run_clustersim("run " + (dir / "s.yaml").string() + " --quiet --out " + (dir / "o").string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(dir / "o" / "report.json");
  const auto m = nlohmann::json::parse(in)["metrics"];
  // Worker 0 steps 1.5, 0.5, 1.5, 0.5 s; all-reduce waits for it: at least 4 s in all.
  EXPECT_GE(metric(m, "makespan_s"), 4.0);
  EXPECT_LT(metric(m, "makespan_s"), 4.5);
  fs::remove_all(dir);
}

TEST(SyncTraining, SameSeedSameRunOtherSeedOtherStragglers)
{
  const auto a = run(kStragglers, {"workload.steps=30"}, seed(4));
  const auto b = run(kStragglers, {"workload.steps=30"}, seed(4));
  const auto c = run(kStragglers, {"workload.steps=30"}, seed(5));
  EXPECT_EQ(a.dump(), b.dump());
  EXPECT_NE(a.dump(), c.dump());
}

TEST(SyncTraining, BadInputIsRefusedWithAPositionAndNothingWritten)
{
  const fs::path out = fresh_dir("bad");
  auto refused = [&](const std::string& set, const std::string& words) {
    auto r = cs::testing::run_clustersim("run " + src(kStragglers) + " --quiet --out " + out.string() + " --set \"" +
                                         set + "\"");
    EXPECT_EQ(r.code, 2) << set << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("--set:1:1: " + set, 0), 0u) << r.err; // blamed on the override that set it
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << set;
  };
  refused("cluster.stragglers.random.probability=1.5", "probability must be in [0, 1]");
  refused("cluster.stragglers.slow=[{devices: [1], factor: 0}]", "factor (relative speed) must be greater than 0");
  refused("cluster.stragglers.slow=[{devices: [16], factor: 0.5}]", "device 16 does not exist");
  refused("cluster.stragglers.random.distribution=lognormal", "lognormal");
  refused("cluster.stragglers.spread=-0.01", "spread' must not be negative");
  refused("cluster.stragglers.spread=0.5", "spread");
  refused("policies.sync_scheme={name: partial-reduce, group_size: 17}", "larger than the 16 replicas");
  refused("policies.sync_scheme={name: ps-ssp, staleness: -1}", "staleness must be at least 1");
  refused("workload.parallel.pp=2", "pipelines (pp > 1) run under the sdpipe scheme");
  refused("policies.sync_scheme=gossip", "gossip");

  const fs::path dir = trace_scenario("badtrace", "worker,step,seconds\n0,0,0.5\n0,1,fast\n");
  auto r = cs::testing::run_clustersim("run " + (dir / "s.yaml").string() + " --quiet --out " + (dir / "o").string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("steps.csv:3:5: expected a number for seconds"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "o"));
  fs::remove_all(dir);
}

TEST(SyncTraining, TheChromeTraceShowsEachWorkersStepsAndSyncs)
{
  const fs::path dir = fresh_dir("chrome");
  auto r = cs::testing::run_clustersim("run " + src(kStragglers) + " --quiet --trace --set workload.steps=5 --out " +
                                       dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(dir / "trace.json");
  const auto trace = nlohmann::json::parse(in);
  const auto& events = trace.is_object() ? trace["traceEvents"] : trace;
  std::map<std::pair<int, int>, int> steps, syncs;
  for (const auto& e : events)
    if (e.value("ph", "") == "X")
      (e.value("cat", "") == "sync" ? syncs : steps)[{e["pid"].get<int>(), e["tid"].get<int>()}] += 1;
  EXPECT_EQ(steps.size(), 16u); // every worker computed
  EXPECT_EQ(syncs.size(), 16u); // and synchronised
  int total = 0;
  for (const auto& [worker, n] : steps)
    total += n;
  EXPECT_EQ(total, 80); // 16 replicas x 5 steps
  fs::remove_all(dir);
}
