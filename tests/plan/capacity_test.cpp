// clustersim plan-capacity: the cheapest (GPU type, count, plan) meeting a target, the frontier, bad input.
#include "sim/plan/capacity.hpp"
#include "tests/cli/run_cli.hpp"

#include "base/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/test_support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace {

using cs::testing::clustersim;
using cs::testing::src;
} // namespace

TEST(Capacity, TargetsParseAndRefuseNonsense)
{
  auto t = cs::parse_capacity_target("time_to_train_days<=30");
  EXPECT_EQ(t.metric, "time_to_train_days");
  EXPECT_TRUE(t.at_most);
  EXPECT_EQ(t.value, 30);
  EXPECT_FALSE(cs::parse_capacity_target("tokens_per_s>=1e6").at_most);
  for (const char* bad :
       {"days<=3", "time_to_train_days<3", "time_to_train_days<=", "cost_usd<=-1", "cost_usd<=abc", "cost_usd"})
    EXPECT_THROW(cs::parse_capacity_target(bad), cs::InputError) << bad;
}

TEST(Capacity, FailuresAndCheckpointsMakeTheTimesExpectedValuesAndPriceTheSpares)
{
  const fs::path plain = fs::temp_directory_path() / ("cs_capacity_plain_" + std::to_string(::getpid()));
  const fs::path failing = fs::temp_directory_path() / ("cs_capacity_fail_" + std::to_string(::getpid()));
  const std::string base = "plan-capacity " + src("scenarios/quickstart.yaml") +
                           " --set workload.model.layers=4 --set workload.iterations=1 --tokens 1e10 "
                           "--devices h100-sxm5 --max-gpus 16 --target 'time_to_train_days<=1' ";
  ASSERT_EQ(clustersim(base + "--out " + plain.string()).code, 0);
  // A GPU failure every 100 GPU-hours, 15 minutes to come back, checkpoints at the optimal interval, one spare node.
  auto r = clustersim(base +
                      "--set cluster.failures.rates.gpu=0.01 --set workload.checkpoint.interval=optimal "
                      "--set cluster.storage.bandwidth=100GB/s --set cluster.spares=1 --out " +
                      failing.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("failures and checkpoints: ETTR"), std::string::npos) << r.out;
  auto rows = [](const fs::path& dir) {
    std::ifstream csv(dir / "frontier.csv");
    std::vector<std::vector<std::string>> out;
    for (std::string line; std::getline(csv, line);) {
      std::vector<std::string> fields;
      std::istringstream in(line);
      for (std::string f; std::getline(in, f, ',');)
        fields.push_back(f);
      out.push_back(fields);
    }
    return out;
  };
  const auto a = rows(plain), b = rows(failing);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  ASSERT_EQ(a[0][14], "time_to_train_days");
  ASSERT_EQ(a[0][18], "ettr");
  for (std::size_t i = 1; i < 3; ++i) {
    const double ettr = std::stod(b[i][18]);
    EXPECT_GT(ettr, 0.5);
    EXPECT_LT(ettr, 1.0);
    EXPECT_EQ(a[i][18], "1");
    // The expected time is the failure-free one over the ETTR; the cost also pays for the spare node's 8 GPUs.
    EXPECT_NEAR(std::stod(b[i][14]), std::stod(a[i][14]) / ettr, 1e-4 * std::stod(b[i][14]));
    const double gpus = std::stod(a[i][1]);
    EXPECT_NEAR(std::stod(b[i][15]) / std::stod(a[i][15]), (gpus + 8) / gpus / ettr, 1e-3);
  }
  fs::remove_all(plain);
  fs::remove_all(failing);
}

TEST(Capacity, CheapestConfigurationMeetingTheTargetAndItsFrontier)
{
  const fs::path out = fs::temp_directory_path() / ("cs_capacity_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string base = "plan-capacity " + src("scenarios/quickstart.yaml") +
                           " --set workload.model.layers=4 --set workload.iterations=1 --tokens 1e10 "
                           "--devices h100-sxm5,h200-sxm --max-gpus 16 ";
  auto r = clustersim(base + "--target 'time_to_train_days<=1' --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cheapest meeting the target: 8 x "), std::string::npos) << r.out;
  std::ifstream csv(out / "frontier.csv");
  int rows = 0, frontier = 0;
  for (std::string line; std::getline(csv, line); ++rows)
    frontier += rows > 0 && line.find(",1,1") != std::string::npos;
  EXPECT_EQ(rows, 5); // header, 2 devices x {8, 16} GPUs
  EXPECT_GE(frontier, 1);
  EXPECT_GT(fs::file_size(out / "frontier.png"), 1000u);
  // The same frontier whether each search simulates one plan at a time or three.
  const fs::path serial = out.string() + "_serial";
  auto one = clustersim(base + "--target 'time_to_train_days<=1' --jobs 1 --out " + serial.string());
  ASSERT_EQ(one.code, 0) << one.err;
  auto text = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  auto three = clustersim(base + "--target 'time_to_train_days<=1' --jobs 3 --out " + (out / "three").string());
  ASSERT_EQ(three.code, 0) << three.err;
  EXPECT_EQ(text(serial / "frontier.csv"), text(out / "three" / "frontier.csv"));
  fs::remove_all(serial);
  // Twice the GPUs cannot be cheaper than half the time it saves is worth here: a tight time target needs 16.
  auto tight = clustersim(base + "--target 'time_to_train_days<=0.035'");
  EXPECT_EQ(tight.code, 0) << tight.out;
  EXPECT_NE(tight.out.find("cheapest meeting the target: 16 x "), std::string::npos) << tight.out;
  // A target nothing meets: exit 1 and says so.
  auto none = clustersim(base + "--target 'time_to_train_hours<=0.001'");
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.out.find("no configuration meets the target"), std::string::npos);
  fs::remove_all(out);
}

TEST(Capacity, BadInputExitsTwo)
{
  const std::string base = "plan-capacity " + src("scenarios/quickstart.yaml") + " --tokens 1e10 ";
  for (const std::string& args :
       {base + "--target 'days<=1'", base + "--target 'cost_usd<=1' --price h100-sxm5=abc",
        base + "--target 'cost_usd<=1' --devices a100-sxm4-80gb", base + "--target 'cost_usd<=1' --devices cpu-node",
        "plan-capacity " + src("scenarios/reference/nccl-h100-ring.yaml") + " --tokens 1e10 --target 'cost_usd<=1'"}) {
    auto r = clustersim(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  }
}

TEST(Capacity, TheScenariosTokenBudgetIsATimeToTrainMetric)
{
  const fs::path out = fs::temp_directory_path() / ("cs_tokens_" + std::to_string(::getpid()));
  auto r = clustersim("run " + src("scenarios/quickstart.yaml") +
                      " --backend analytical --quiet --set workload.iterations=1 --set workload.tokens=1e12 --out " +
                      out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(out / "report.json");
  const std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("\"time_to_train_s\""), std::string::npos);
  fs::remove_all(out);
  // plan-capacity takes the budget from the scenario when --tokens is not given, and needs one.
  const std::string base = "plan-capacity " + src("scenarios/quickstart.yaml") +
                           " --set workload.model.layers=4 --devices h100-sxm5 --max-gpus 8 --target "
                           "'time_to_train_days<=1'";
  auto with = clustersim(base + " --set workload.tokens=1e10");
  EXPECT_EQ(with.code, 0) << with.err;
  EXPECT_NE(with.out.find("1e+10 tokens"), std::string::npos) << with.out;
  EXPECT_EQ(clustersim(base).code, 2);
}

TEST(Capacity, NicsPerNodeAndOversubscriptionAreSearchedToo)
{
  cs::Scenario base = cs::load_scenario(src("scenarios/quickstart.yaml"), {"workload.model.layers=4"});
  cs::CapacityOptions o;
  o.tokens = 1e10;
  o.devices = {"h100-sxm5"};
  o.max_gpus = 16;
  o.nics_per_node = {2, 8};
  o.oversubscription = {1, 4};
  o.usd_per_nic_hour = 0.5;
  o.target = cs::parse_capacity_target("time_to_train_days<=1");
  const auto cs = cs::plan_capacity(base, o);
  ASSERT_EQ(cs.size(), 8u); // {8, 16} GPUs x {2, 8} NICs x {1, 4}
  auto find = [&](int gpus, int nics) {
    return *std::find_if(cs.begin(), cs.end(),
                         [&](const auto& c) { return c.gpus == gpus && c.nics_per_node == nics; });
  };
  // Across two nodes a quarter of the NICs slows the gradient all-reduce; NICs are priced only when asked.
  EXPECT_GT(find(16, 2).time_to_train_s, find(16, 8).time_to_train_s);
  EXPECT_NEAR(find(8, 8).cost_usd - find(8, 2).cost_usd, 6 * 0.5 * find(8, 8).time_to_train_s / 3600, 1e-6);
}

TEST(Capacity, TheFabricIsPricedByItsSwitchPorts)
{
  cs::Scenario base = cs::load_scenario(src("scenarios/quickstart.yaml"));
  cs::ClusterParams c = base.cluster; // 8 NICs per node, 4 nodes per leaf switch by default
  c.network.nics_per_node = 8;
  c.network.levels.front().oversubscription = 1;
  EXPECT_EQ(cs::fabric_switch_ports(c, 4), 32.0);          // one leaf: its 32 NIC ports and no uplinks
  EXPECT_EQ(cs::fabric_switch_ports(c, 8), 64.0 + 2 * 64); // two leaves: 32 uplinks each, spine ports beside them
  c.network.levels.front().oversubscription = 4;
  EXPECT_EQ(cs::fabric_switch_ports(c, 8), 64.0 + 2 * 16); // 4:1 buys a quarter of the uplinks
  cs::CapacityOptions o;
  o.usd_per_port_hour = 0.5;
  EXPECT_DOUBLE_EQ(cs::composition_usd_per_hour(c, 64, 2.0, o), 64 * 2.0 + 96 * 0.5);
  o.usd_per_nic_hour = 0.25;
  EXPECT_DOUBLE_EQ(cs::composition_usd_per_hour(c, 64, 2.0, o), 64 * 2.0 + 64 * 0.25 + 96 * 0.5);
}

TEST(Capacity, TheScenarioCarriesAPriceTableTheCommandLineOverrides)
{
  const std::string scenario = src("scenarios/quickstart.yaml");
  const std::string common = " --tokens 1e9 --target 'cost_usd<=1e9' --devices h100-sxm5 --max-gpus 8 "
                             "--set workload.model.layers=4";
  auto price_of = [&](const std::string& args) {
    const auto r = clustersim("plan-capacity " + scenario + common + " " + args);
    EXPECT_EQ(r.code, 0) << r.err;
    std::smatch m; // the row's $/GPU-h: the first number with three decimals after the plan
    static const std::regex row(R"(h100-sxm5 +8 +8 +1 +[0-9 ]+(?:zero[0-9] +)?([0-9]+\.[0-9]{3}) )");
    return std::regex_search(r.out, m, row) ? std::stod(m[1]) : -1.0;
  };
  EXPECT_NEAR(price_of(""), 4.916, 1e-9); // the documented table
  EXPECT_NEAR(price_of("--set 'prices.gpu_hour=[{device: h100-sxm5, usd: 2.5}]'"), 2.5, 1e-9);
  EXPECT_NEAR(price_of("--set 'prices.gpu_hour=[{device: h100-sxm5, usd: 2.5}]' --price h100-sxm5=3"), 3.0, 1e-9);
  auto r = clustersim("validate " + scenario + " --set 'prices.gpu_hour=[{device: tpu-v9, usd: 1}]'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not a GPU in the device catalog"), std::string::npos) << r.err;
  r = clustersim("validate " + scenario + " --set prices.switch_port_hour=-1");
  EXPECT_EQ(r.code, 2);
  r = clustersim("validate " + scenario + " --set prices.fabric=1");
  EXPECT_EQ(r.code, 2);
}
