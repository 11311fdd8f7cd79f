#include "sim/goodput/goodput.hpp"
#include "sim/goodput/long_run.hpp"

#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

// Llama 3 405B's job as its paper describes it (validation.md section 7): 16,384 H100 in 2,048 hosts, the
// llama3-2024 catalog, 15 minutes from a failure back to training (MegaScale's figure), 16 spare nodes, an 8.3 s
// step and a 5.2 TiB checkpoint: 2.8 s to storage at 2 TB/s, 5.5 ms stall when asynchronous.
cs::LongRunSetup llama3_job(int nodes = 2048)
{
  cs::LongRunSetup s;
  s.step_s = 8.3;
  s.tokens_per_step = 16.0 * 1048576;
  s.nodes = nodes;
  s.gpus = s.nics = 8 * nodes;
  s.failures.causes = cs::find_failure_catalog("llama3-2024")->causes;
  s.failures.detect = cs::Seconds{300};
  s.failures.restart = cs::Seconds{600};
  s.spares = 16;
  s.interval_s = 300;
  s.stall_s = 0.0055;
  s.durable_s = 2.85;
  s.days = 54;
  return s;
}

TEST(FailureCatalog, Llama3RatesGiveBackTable5sCounts)
{
  const cs::FailureCatalog* c = cs::find_failure_catalog("llama3-2024");
  ASSERT_NE(c, nullptr);
  double unexpected = 0, planned = 0;
  for (const auto& cause : c->causes) {
    const double units = cause.unit == cs::FailureUnit::HOST ? 2048 : cause.unit == cs::FailureUnit::JOB ? 1 : 16384;
    (cause.planned ? planned : unexpected) += cause.per_unit_hour * units * 54 * 24;
  }
  EXPECT_NEAR(unexpected, 419, 1e-9);
  EXPECT_NEAR(planned, 47, 1e-9);
}

TEST(LongRun, Llama3SnapshotHasItsInterruptionsAndAnEttrAbove85Percent)
{
  const cs::GoodputResult r = cs::estimate_long_run(llama3_job(), 20);
  EXPECT_NEAR(r.unexpected.mean, 419, 0.15 * 419);
  EXPECT_NEAR(r.interruptions.mean - r.unexpected.mean, 47, 0.3 * 47);
  EXPECT_GT(r.ettr.mean, 0.85);
  EXPECT_LT(r.ettr.mean, 0.97);
  EXPECT_GT(r.by_cause.at("gpu").mean, r.by_cause.at("hbm").mean); // 148 against 72
  // Every second of the run is productive, redone, restarting or stalled for a checkpoint.
  const cs::LongRunOutcome o = cs::simulate_long_run(llama3_job(), 7);
  EXPECT_NEAR(o.productive_s + o.redo_s + o.restart_s + o.checkpoint_s, o.wall_s, 1e-6 * o.wall_s);
}

TEST(LongRun, WeibullGapsKeepTheRateButClusterTheFailures)
{
  // Same mean gap, shape 0.78: as many failures over a long run, but more short gaps (the clustering HPC logs show).
  cs::LongRunSetup exponential = llama3_job(), weibull = llama3_job();
  weibull.failures.law = cs::FailureLaw::WEIBULL;
  exponential.days = weibull.days = 540;
  const double e = cs::estimate_long_run(exponential, 10).unexpected.mean;
  const double w = cs::estimate_long_run(weibull, 10).unexpected.mean;
  EXPECT_NEAR(w / e, 1.0, 0.05) << e << " vs " << w;
  // A failure that strikes while the job is down counts when it is back up: with Weibull's clustered gaps more of
  // them fall inside restarts, so the job loses less work per failure than with exponential gaps.
  const cs::LongRunOutcome a = cs::simulate_long_run(exponential, 2), b = cs::simulate_long_run(weibull, 2);
  EXPECT_LT(b.redo_s / b.unexpected, a.redo_s / a.unexpected);
}

TEST(LongRun, TheSameSeedDrawsTheSameRun)
{
  const cs::LongRunOutcome a = cs::simulate_long_run(llama3_job(), 3), b = cs::simulate_long_run(llama3_job(), 3);
  EXPECT_EQ(a.by_cause, b.by_cause);
  EXPECT_EQ(a.productive_s, b.productive_s);
}

TEST(LongRun, OptimalIntervalAgreesWithYoungDalyWhereItsAssumptionsHold)
{
  cs::LongRunSetup s = llama3_job();
  s.stall_s = s.durable_s = 2.85; // synchronous: the job waits for the write
  const cs::GoodputResult r = cs::best_interval(s, 20);
  EXPECT_NEAR(r.setup.interval_s / r.young_daly_s, 1.0, 0.2) << r.setup.interval_s << " vs " << r.young_daly_s;
}

TEST(LongRun, OptimalIntervalDepartsFromYoungDalyWhenTheWriteIsComparableToTheMtbf)
{
  // A 64-node job whose checkpoint takes half its MTBF: Young's sqrt(2 d M) assumes d << M, and the simulated optimum
  // departs from it towards Daly's higher-order estimate, sqrt(2 d M) (1 + sqrt(d / 2M) / 3 + d / 9M) - d (d < 2M).
  cs::LongRunSetup s = llama3_job(64);
  s.failures.causes = {cs::FailureCause{"gpu", cs::FailureUnit::GPU, 1.0 / (512 * 4.0), true, false, ""}};
  s.spares = 64;
  const double mtbf = 4 * 3600.0, write = mtbf / 2;
  s.stall_s = s.durable_s = write;
  s.days = 365;
  const cs::GoodputResult r = cs::best_interval(s, 20);
  const double young = std::sqrt(2 * write * mtbf);
  const double daly = young * (1 + std::sqrt(write / (2 * mtbf)) / 3 + write / (9 * mtbf)) - write;
  EXPECT_NEAR(r.mtbf_s, mtbf, 1e-6 * mtbf);
  EXPECT_NEAR(r.young_daly_s, young, 1e-6 * young);
  EXPECT_GT(std::abs(r.setup.interval_s / young - 1), 0.2) << r.setup.interval_s;
  EXPECT_LT(std::abs(r.setup.interval_s - daly), std::abs(r.setup.interval_s - young)) << r.setup.interval_s;
}

TEST(LongRun, EttrFallsAsTheClusterGrowsAndAsyncCheckpointsBeatSync)
{
  const double small = cs::estimate_long_run(llama3_job(512), 10).ettr.mean;
  const double large = cs::estimate_long_run(llama3_job(2048), 10).ettr.mean;
  EXPECT_GT(small, large + 0.02);
  cs::LongRunSetup sync = llama3_job();
  sync.stall_s = sync.durable_s = 2.85;
  sync.interval_s = 60;
  cs::LongRunSetup async = llama3_job();
  async.interval_s = 60;
  EXPECT_GT(cs::estimate_long_run(async, 10).ettr.mean, cs::estimate_long_run(sync, 10).ettr.mean + 0.01);
}

TEST(LongRun, WithoutSparesALostNodeWaitsForItsRepair)
{
  cs::LongRunSetup none = llama3_job(), some = llama3_job();
  none.spares = 0;
  const cs::LongRunOutcome a = cs::simulate_long_run(none, 5), b = cs::simulate_long_run(some, 5);
  EXPECT_GT(a.spare_wait_s, 0);
  EXPECT_EQ(b.spare_wait_s, 0);
  EXPECT_LT(a.ettr(), b.ettr());
}

using cs::testing::run_clustersim;
using cs::testing::src;

TEST(GoodputCli, WritesGoodputJsonAndRefusesBadInputWithAPosition)
{
  const std::string scenario = src("scenarios/llama3-405b-goodput.yaml");
  const auto out = std::filesystem::temp_directory_path() / "cs_goodput_cli";
  std::filesystem::remove_all(out);
  // 64 nodes: --plots simulates the job's step at five other sizes, up to four times its nodes.
  auto r = run_clustersim("goodput " + scenario +
                          " --days 54 --seeds 4 --plots --set cluster.nodes=64 --set cluster.spares=4 --set "
                          "workload.batch.global=64 --out " +
                          out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ETTR"), std::string::npos) << r.out;
  for (const char* f : {"goodput.json", "ettr-gpus.png", "ettr-gpus.svg", "ettr-interval.png", "ettr-interval.svg"})
    EXPECT_TRUE(std::filesystem::exists(out / f)) << f;
  struct Case {
    std::string args, words;
  };
  const std::vector<Case> bad{
      {" --days 0", "--days must be in (0, 3650]"},
      {" --days 4000", "--days must be in (0, 3650]"},
      {" --days 54 --set cluster.failures.rates.gpu=0", "must be positive"},
      {" --days 54 --set cluster.failures.rates.gpu=-1e-6", "must be positive"},
      {" --days 54 --set cluster.spares=5000", "spares beyond the cluster"},
      {" --days 54 --set workload.checkpoint.interval=1s --set workload.checkpoint.mode=sync",
       "shorter than a checkpoint write"},
      {" --days 54 --set workload.checkpoint.interval=soon", "interval:"},
      {" --days 54 --set cluster.failures.catalog=llama4", "catalog"},
      {" --days 54 --set cluster.failures.restart=-5min", "must not be negative"},
      {" --days 54 --set cluster.failures.weibull_shape=0", "weibull_shape must be in"},
  };
  for (const auto& c : bad) {
    const auto dir = std::filesystem::temp_directory_path() / "cs_goodput_bad";
    std::filesystem::remove_all(dir);
    auto b = run_clustersim("goodput " + scenario + c.args + " --out " + dir.string());
    EXPECT_EQ(b.code, 2) << c.args << "\n" << b.err;
    EXPECT_NE(b.err.find(c.words), std::string::npos) << c.args << "\n" << b.err;
    EXPECT_NE(b.err.find(":"), std::string::npos) << b.err; // file:line:col or <command line>/--set positions
    EXPECT_FALSE(std::filesystem::exists(dir / "goodput.json")) << c.args;
  }
}

TEST(GoodputCli, SweepsTabulateTheLongRunOfEachVariant)
{
  const auto out = cs::testing::fresh_dir("cs_goodput_sweep");
  auto r = run_clustersim("sweep " + src("scenarios/llama3-405b-goodput.yaml") +
                          " --goodput-days 54 --axis workload.checkpoint.mode=sync,async --metric ettr --out " +
                          out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream csv(out / "results.csv");
  std::string header, sync, async;
  std::getline(csv, header);
  std::getline(csv, sync);
  std::getline(csv, async);
  auto column = [&](const std::string& line, const std::string& name) {
    std::vector<std::string> names, values;
    std::istringstream h(header), v(line);
    for (std::string f; std::getline(h, f, ',');)
      names.push_back(f);
    for (std::string f; std::getline(v, f, ',');)
      values.push_back(f);
    const auto i = std::find(names.begin(), names.end(), name) - names.begin();
    return std::stod(values.at(static_cast<std::size_t>(i)));
  };
  EXPECT_GT(column(async, "ettr"), column(sync, "ettr"));
  EXPECT_GT(column(sync, "lost_gpu_hours_checkpoints"), 10 * column(async, "lost_gpu_hours_checkpoints"));
  EXPECT_NEAR(column(sync, "unexpected_interruptions"), 419, 0.15 * 419);
}

TEST(GoodputCli, CheckpointWritesAreTrafficThroughTheNicsTheFabricAndTheStorageLink)
{
  // 64 nodes of the Llama 3 job: 5.67 TB of model state, 512 GPUs with a 48.5 GB/s NIC each (24.8 TB/s in all).
  const auto out = cs::testing::fresh_dir("cs_goodput_write");
  auto write_s = [&](const std::string& sets) {
    auto r = run_clustersim("goodput " + src("scenarios/llama3-405b-goodput.yaml") +
                            " --days 54 --seeds 2 --set cluster.nodes=64 --set cluster.spares=4 " + sets + " --out " +
                            out.string());
    EXPECT_EQ(r.code, 0) << r.err;
    std::ifstream in(out / "goodput.json");
    const auto j = nlohmann::json::parse(in);
    return std::make_pair(j.at("checkpoint_write_s").get<double>(), j.at("checkpoint_bytes").get<double>());
  };
  const auto [storage_bound, bytes] = write_s("--set cluster.storage.bandwidth=2TB/s");
  EXPECT_NEAR(storage_bound, bytes / 2e12, 0.06 * bytes / 2e12); // the storage link is the bottleneck
  const double nics = 512 * 50e9 * 0.97;
  const double nic_bound = write_s("--set cluster.storage.bandwidth=1000TB/s").first;
  EXPECT_NEAR(nic_bound, bytes / nics, 0.05 * bytes / nics); // every NIC at its rate
  // Leaf uplinks at 4:1: the fabric, not the NICs, bounds the write.
  const double oversubscribed = write_s("--set cluster.storage.bandwidth=1000TB/s --set "
                                        "'cluster.network.levels=[{oversubscription: 4}, {oversubscription: 1}]'")
                                    .first;
  EXPECT_NEAR(oversubscribed / nic_bound, 4.0, 0.2);
  // Rails of one level have no spine to hang the storage on (once "no route from node0/gpu1 to storage").
  const double rails = write_s("--set cluster.storage.bandwidth=1000TB/s --set cluster.network.kind=rail-optimized "
                               "--set 'cluster.network.levels=[{oversubscription: 1}]'")
                           .first;
  EXPECT_NEAR(rails, nic_bound, 0.05 * nic_bound);
}

} // namespace
