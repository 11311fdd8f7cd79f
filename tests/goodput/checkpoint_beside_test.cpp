// The asynchronous write beside the step, in-memory checkpoints lost with a node and its partner, and the
// weak-scaling curve of the long run, each simulated.
#include "sim/goodput/checkpoint_traffic.hpp"
#include "sim/goodput/goodput.hpp"
#include "sim/goodput/long_run.hpp"
#include "sim/run/scenario_checks.hpp"

#include "models/devices/device_catalog.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace {

using cs::testing::src;

// 64 nodes of the Llama 3 job (TP 8, PP 16, DP 4, 16 microbatches of one sequence): its pipeline sends cross the
// NICs from the first microbatch on.
cs::Scenario llama3_on_64_nodes(const std::string& storage)
{
  cs::Scenario s = cs::load_scenario(
      src("scenarios/llama3-405b-goodput.yaml"),
      {"cluster.nodes=64", "cluster.spares=4", "workload.batch.global=64", "cluster.storage.bandwidth=" + storage});
  cs::check_scenario(s);
  return s;
}

TEST(CheckpointBesideStep, AWriteThatFillsTheNicsSlowsTheStepAndAStorageBoundOneHardly)
{
  const cs::Scenario fast = llama3_on_64_nodes("1000TB/s"), slow = llama3_on_64_nodes("2TB/s");
  const cs::StepRun step = cs::run_step(fast);
  const cs::CheckpointCost nic_bound = cs::checkpoint_cost(fast, step.parameters, &step);
  const cs::CheckpointCost storage_bound = cs::checkpoint_cost(slow, step.parameters, &step);
  ASSERT_TRUE(nic_bound.beside_step);
  // Beside the step, the write keeps the NIC share the step leaves it, and the step waits for what the write takes.
  // (TP 8 x PP 16 keeps its busiest NIC 1% busy: 0.229 s alone, 0.231 s beside; the step's sends wait 81 ms.)
  EXPECT_GT(nic_bound.write_beside_s, nic_bound.write_s);
  EXPECT_GT(nic_bound.step_slowdown_s, 0.1 * nic_bound.write_s);
  EXPECT_GT(nic_bound.step_slowdown_s, 20 * storage_bound.step_slowdown_s);
  EXPECT_NEAR(nic_bound.stall_s, cs::checkpoint_cost(fast, step.parameters).stall_s + nic_bound.step_slowdown_s, 1e-12);
  // At 2 TB/s every GPU writes at 3.9 GB/s of its 48.5: the write hardly notices the step.
  EXPECT_NEAR(storage_bound.write_beside_s, storage_bound.write_s, 0.02 * storage_bound.write_s);
}

TEST(CheckpointBesideStep, TheHostCopyCrossesEachGpusPcieLink)
{
  const cs::Scenario s = llama3_on_64_nodes("2TB/s");
  const cs::CheckpointCost c = cs::checkpoint_cost(s, 1e9); // 16 GB of state over 512 GPUs: 31.25 MB each
  const double pcie = 64e9;                                 // H100 SXM5 PCIe Gen5 x16 in the catalog
  EXPECT_GT(c.stall_s, 31.25e6 / pcie * 0.5);
  EXPECT_LT(c.stall_s, 31.25e6 / pcie * 2);
  EXPECT_FALSE(c.beside_step); // no step given: the write is timed on an idle fabric
}

TEST(CheckpointBesideStep, TheScenariosOwnBackgroundLoadStaysUnderTheWrite)
{
  // Half of every NIC taken by the scenario's background traffic, at 1,000 TB/s storage (the write is NIC-bound).
  cs::Scenario loaded = cs::load_scenario(src("scenarios/llama3-405b-goodput.yaml"),
                                          {"cluster.nodes=64", "cluster.spares=4", "workload.batch.global=64",
                                           "cluster.storage.bandwidth=1000TB/s",
                                           "cluster.network.background=[{tier: nic, kind: constant, load: 0.5}]"});
  cs::check_scenario(loaded);
  const cs::Scenario idle = llama3_on_64_nodes("1000TB/s");
  const double bytes = 1e10;
  // The write shares the fabric as the step does: at half the NIC, twice as long.
  EXPECT_NEAR(cs::simulate_checkpoint_write(loaded, bytes) / cs::simulate_checkpoint_write(idle, bytes), 2.0, 0.02);
  // Beside the step, the write's load joins the scenario's on each NIC instead of replacing it.
  cs::PlatformSpec platform =
      cs::build_platform_spec(loaded.cluster, *cs::DeviceCatalog::builtin().find(loaded.cluster.device));
  cs::apply_background_traffic(platform, loaded.cluster.network, loaded.source.base_dir());
  cs::load_nics_with_write(platform, loaded, bytes, 1.0); // 10 GB a second of a 48.5 GB/s NIC: 20.6% taken
  const auto& links = platform.topology.links();
  const auto nic = std::find_if(links.begin(), links.end(), [](const cs::PhysicalLink& l) { return l.tier == "nic"; });
  ASSERT_NE(nic, links.end());
  const cs::LinkAvailability& nic0 = platform.background.at(static_cast<int>(nic - links.begin()));
  EXPECT_NEAR(nic0.at(0.5), 0.5 * (1 - 1e10 / 48.5e9), 1e-9);
  EXPECT_NEAR(nic0.at(1.5), 0.5, 1e-12);
}

// A pair of nodes failing often enough that both lose their memory between two checkpoints.
cs::LongRunSetup failing_pair(double storage_interval_s)
{
  cs::LongRunSetup s;
  s.step_s = 1;
  s.tokens_per_step = 1e6;
  s.nodes = 2;
  s.gpus = s.nics = 16;
  // The job: one GPU failure every 75 minutes on average.
  s.failures.causes = {cs::FailureCause{"gpu", cs::FailureUnit::GPU, 0.05, true, false, ""}};
  s.failures.detect = cs::Seconds{300};
  s.failures.restart = cs::Seconds{600};
  s.failures.repair = cs::Seconds{3600};
  s.spares = 2;
  s.interval_s = 3600; // a checkpoint an hour: a failure in the hour after a restart finds its partner exposed
  s.stall_s = s.durable_s = s.load_s = 1;
  s.in_memory = true;
  s.storage_interval_s = storage_interval_s;
  s.storage_durable_s = s.storage_load_s = 30;
  s.days = 30;
  return s;
}

TEST(InMemoryCheckpoints, ANodeAndItsPartnerLostTogetherFallBackToStorage)
{
  const cs::GoodputResult with_storage = cs::estimate_long_run(failing_pair(4 * 3600), 10);
  const cs::GoodputResult without = cs::estimate_long_run(failing_pair(0), 10);
  EXPECT_GT(with_storage.in_memory_losses.mean, 5);
  // Without persistent copies, each double loss starts the job over: it keeps almost nothing of 30 days.
  EXPECT_LT(without.ettr.mean, 0.1 * with_storage.ettr.mean);
  // The same failures on 2,048 nodes rarely pick a partner in time.
  cs::LongRunSetup wide = failing_pair(4 * 3600);
  wide.nodes = 2048;
  wide.gpus = wide.nics = 16;
  EXPECT_LT(cs::estimate_long_run(wide, 10).in_memory_losses.mean, 0.2 * with_storage.in_memory_losses.mean);
  EXPECT_EQ(cs::checkpoint_peer(0, 5), 1);
  EXPECT_EQ(cs::checkpoint_peer(3, 5), 2);
  EXPECT_EQ(cs::checkpoint_peer(4, 5), 3); // an odd last node joins the pair before it
}

TEST(WeakScaling, EachSizesStepIsSimulatedAndTheLargestLosesMost)
{
  const cs::Scenario s = llama3_on_64_nodes("2TB/s");
  cs::GoodputOptions options;
  options.days = 54;
  options.seeds = 4;
  options.by_gpus = true;
  const cs::GoodputResult r = cs::run_goodput(s, options);
  ASSERT_EQ(r.ettr_by_gpus.size(), 5u); // 16 to 256 nodes: 8 cannot hold one TP 8 x PP 16 replica
  EXPECT_EQ(r.ettr_by_gpus.front().gpus, 128);
  EXPECT_EQ(r.ettr_by_gpus.back().gpus, 2048);
  // The largest size loses most. At the smallest, per-job causes (software, planned) dominate and each GPU's larger
  // shard stalls longer on PCIe, so ETTRs there lie within 0.1% of each other, in no fixed order.
  EXPECT_LT(r.ettr_by_gpus[4].ettr, r.ettr_by_gpus[2].ettr - 0.002);
  EXPECT_LT(r.ettr_by_gpus[4].ettr, r.ettr_by_gpus[0].ettr - 0.002);
  for (std::size_t i = 1; i < r.ettr_by_gpus.size(); ++i)
    EXPECT_GT(r.ettr_by_gpus[i].goodput_tokens_per_s, r.ettr_by_gpus[i - 1].goodput_tokens_per_s);
  // The data-parallel ring grows with the replicas: the step is the DES's at each size, not the job's held.
  EXPECT_GT(r.ettr_by_gpus.back().step_s, r.ettr_by_gpus.front().step_s);
  EXPECT_EQ(r.ettr_by_gpus[2].step_s, r.setup.step_s);
}

TEST(InMemoryCheckpoints, StorageIntervalBelongsToInMemoryMode)
{
  const auto dir = cs::testing::fresh_dir("cs_goodput_storage_interval");
  auto r =
      cs::testing::run_clustersim("goodput " + src("scenarios/llama3-405b-goodput.yaml") +
                                  " --days 54 --set workload.checkpoint.storage_interval=3h --out " + dir.string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("storage_interval is for mode in-memory"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "goodput.json"));
}

} // namespace
