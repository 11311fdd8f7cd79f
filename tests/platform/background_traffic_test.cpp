#include "base/input_error.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/isolated_run.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace {

// Two hosts joined by one 1 GB/s, 1 us link carrying the background load `bg`.
cs::PlatformSpec wire(const cs::LinkAvailability& bg)
{
  cs::PlatformSpec p;
  p.device = cs::DeviceCatalog::builtin().find("h100-sxm5");
  p.machines = 2;
  int a = p.topology.add_host("a", 0, 0), b = p.topology.add_host("b", 1, 0);
  p.topology.add_edge(a, b, p.topology.add_link("wire", 1e9, 1e-6, "nic"));
  p.background[0] = bg;
  return p;
}

cs::TaskGraph one_transfer(double bytes)
{
  cs::TaskGraph g;
  g.add_transfer(g.add_stream(0, "comm"), 0, 1, bytes, "send", {});
  g.finalize();
  return g;
}

double simgrid_makespan(const cs::TaskGraph& g, const cs::PlatformSpec& p)
{
  return std::stod(cs::run_isolated([&] {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", cs::run_simgrid(g, p).makespan);
    return std::string(buf);
  }));
}

} // namespace

TEST(BackgroundTraffic, ConstantLoadTakesItsShare)
{
  cs::LinkAvailability half;
  half.points = {{0.0, 0.5}};
  auto p = wire(half);
  auto g = one_transfer(1e6);
  const double expected = 1e-6 + 1e6 / 0.5e9;
  EXPECT_NEAR(cs::run_analytical(g, p).makespan, expected, 1e-12);
  EXPECT_NEAR(simgrid_makespan(g, p), expected, 1e-9);
}

TEST(BackgroundTraffic, OnOffLoadIsIntegratedOverItsPeriods)
{
  // Half the link for 1 ms, all of it for 1 ms, repeating. 3 MB after the 1 us latency: 0.4995 MB in [1 us, 1 ms),
  // 1 MB in [1, 2) ms, 0.5 MB in [2, 3) ms, 1 MB in [3, 4) ms, and the last 500 B at half speed from 4 ms.
  cs::LinkAvailability onoff;
  onoff.points = {{0.0, 0.5}, {1e-3, 1.0}};
  onoff.period = 2e-3;
  auto p = wire(onoff);
  auto g = one_transfer(3e6);
  const double T = 4e-3 + 500 / 0.5e9;
  EXPECT_NEAR(cs::run_analytical(g, p).makespan, T, 1e-12);
  EXPECT_NEAR(simgrid_makespan(g, p), T, 1e-8);
}

TEST(BackgroundTraffic, CsvSeriesAndItsErrors)
{
  auto dir = std::filesystem::temp_directory_path() / ("cs_bg_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  auto ok = cs::availability_from_csv(write("ok.csv", "time_s,load\n0,0.25\n0.002,0\n"), 0);
  EXPECT_DOUBLE_EQ(ok.at(0.001), 0.75);
  EXPECT_DOUBLE_EQ(ok.at(0.003), 1.0);
  auto where = [&](const std::string& text) {
    std::string path = write("bad.csv", text);
    try {
      cs::availability_from_csv(path, 0);
    } catch (const cs::InputError& e) {
      return e.where().substr(path.size());
    }
    return std::string("no error");
  };
  EXPECT_EQ(where("0,0.5\n0.1,x\n"), ":2:5: expected a number for load, got 'x'");
  EXPECT_EQ(where("0,0.5\n0.1\n"), ":2:1: expected 'time_s,load'");
  EXPECT_EQ(where("0,0.5\n0,0.2\n"), ":2:1: times must start at 0 or later and increase");
  EXPECT_EQ(where("0,1.5\n"), ":1:3: load must be in [0, 1)");
  EXPECT_EQ(where("# nothing\n"), ":1:1: no rows");
  EXPECT_THROW(cs::availability_from_csv((dir / "missing.csv").string(), 0), cs::InputError);
  std::filesystem::remove_all(dir);
}

TEST(BackgroundTraffic, AppliesByTierOrNameAndRejectsUnknownOnes)
{
  cs::ClusterParams c;
  c.nodes = 2;
  auto p = cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("h100-sxm5"));
  cs::NetworkParams n;
  n.background = {cs::BackgroundParams{"nic", {}, cs::BackgroundKind::CONSTANT, 0.3, {}, {}, "", {}}};
  cs::apply_background_traffic(p, n, "");
  EXPECT_EQ(p.background.size(), 16u); // 2 nodes x 8 NICs
  EXPECT_DOUBLE_EQ(p.background.begin()->second.at(5.0), 0.7);
  n.background = {cs::BackgroundParams{"warp-drive", {}, cs::BackgroundKind::CONSTANT, 0.3, {}, {}, "", {}}};
  EXPECT_THROW(cs::apply_background_traffic(p, n, ""), std::invalid_argument);
  n.background = {cs::BackgroundParams{"", {"node9/nic0"}, cs::BackgroundKind::CONSTANT, 0.3, {}, {}, "", {}}};
  EXPECT_THROW(cs::apply_background_traffic(p, n, ""), std::invalid_argument);
}

TEST(BackgroundTraffic, TwoLoadsOnOneLinkMultiplyTheirAvailabilities)
{
  cs::LinkAvailability constant, onoff, once;
  constant.points = {{0.0, 0.5}};
  onoff.points = {{0.0, 0.5}, {1e-3, 1.0}};
  onoff.period = 2e-3;
  once.points = {{0.0, 0.8}, {3e-3, 1.0}};
  // No period on either: exact, the union of their changes.
  const cs::LinkAvailability a = cs::product(constant, once);
  EXPECT_EQ(a.period, 0);
  EXPECT_DOUBLE_EQ(a.at(1e-3), 0.4);
  EXPECT_DOUBLE_EQ(a.at(5e-3), 0.5);
  // A period against none: unrolled, the periodic one's cycles kept.
  const cs::LinkAvailability b = cs::product(onoff, once);
  EXPECT_DOUBLE_EQ(b.at(0.5e-3), 0.4);
  EXPECT_DOUBLE_EQ(b.at(1.5e-3), 0.8);
  EXPECT_DOUBLE_EQ(b.at(2.5e-3), 0.4);
  EXPECT_DOUBLE_EQ(b.at(3.5e-3), 1.0);
  EXPECT_DOUBLE_EQ(b.at(4.5e-3), 0.5);
  EXPECT_DOUBLE_EQ(b.at(9.5e-3), 1.0);
  // A transfer sees both: 1 MB after the 1 us latency moves 0.3996 MB at 40% until 1 ms, the rest at 80%.
  auto p = wire(b);
  auto g = one_transfer(1e6);
  EXPECT_NEAR(cs::run_analytical(g, p).makespan, 1e-3 + (1e6 - 0.4e9 * (1e-3 - 1e-6)) / 0.8e9, 1e-12);
}
