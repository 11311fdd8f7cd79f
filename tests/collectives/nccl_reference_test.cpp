// The reference scenarios of validation.md §1-2 (scenarios/reference/nccl-*.yaml), each against its band.
#include <array>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

// Runs a reference scenario and returns size -> (time_s, busbw GB/s) from its collective.csv.
std::map<double, std::pair<double, double>> run(const std::string& scenario, const std::string& sets = "")
{
  static int counter = 0;
  fs::path out =
      fs::temp_directory_path() / ("cs_nccl_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::string cmd = std::string(CS_BINARY) + " run " + CS_SOURCE_DIR + "/scenarios/reference/" + scenario +
                    " --quiet " + sets + " --out " + out.string();
  int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;
  std::ifstream csv(out / "collective.csv");
  std::map<double, std::pair<double, double>> rows;
  std::string line;
  std::getline(csv, line); // header
  while (std::getline(csv, line)) {
    std::stringstream ss(line);
    std::string f[6];
    for (auto& x : f)
      std::getline(ss, x, ',');
    rows[std::stod(f[0])] = {std::stod(f[1]), std::stod(f[3])};
  }
  fs::remove_all(out);
  return rows;
}

constexpr double MiB = 1048576, GiB = 1073741824;

} // namespace

TEST(NcclReference, A100NvswitchAllReduceSweep)
{
  auto rows = run("nccl-a100-nvswitch.yaml");
  const std::vector<std::tuple<double, double, double>> reference = {{1 * MiB, 18.0, 0.30},
                                                                     {8 * MiB, 109.9, 0.30},
                                                                     {64 * MiB, 171.5, 0.15},
                                                                     {512 * MiB, 222.7, 0.15},
                                                                     {16 * GiB, 234.9, 0.15}};
  for (auto [size, busbw, band] : reference) {
    ASSERT_TRUE(rows.count(size)) << size;
    EXPECT_NEAR(rows[size].second / busbw, 1.0, band) << size << " B: " << rows[size].second << " GB/s";
  }
}

TEST(NcclReference, H100RingAndNvlsAt8GiB)
{
  EXPECT_NEAR(run("nccl-h100-ring.yaml")[8 * GiB].second / 370.0, 1.0, 0.15);
  EXPECT_NEAR(run("nccl-h100-nvls.yaml")[8 * GiB].second / 480.0, 1.0, 0.15);
}

TEST(NcclReference, B200FourNodesAndBlackwellNvls)
{
  // 4 x 8 B200, 4 GiB: 22.05 ms measured (stas00); bound by the 8 rails, so the ring over them.
  EXPECT_NEAR(run("nccl-b200-4node.yaml")[4 * GiB].first / 22.05e-3, 1.0, 0.15);
  // Inside one node NVLS runs at Blackwell's 0.74 of the port NCCL sees (18 links x 40.1 GB/s), against Hopper's 0.85
  // of 18 x 20.6 GB/s.
  const double b200 = run("nccl-h100-nvls.yaml", "--set cluster.device=b200")[8 * GiB].second;
  const double h100 = run("nccl-h100-nvls.yaml")[8 * GiB].second;
  EXPECT_NEAR(b200 / h100, (721.8 * 0.74) / (370.8 * 0.85), 0.01);
}

TEST(NcclReference, Gb200Nvl72IsOneNvlinkDomain)
{
  // A 72-GPU node behind NVSwitch: an all-to-all stays on NVLink (the catalog's NCCL rate, 721.8 GB/s a port),
  // where nine 8-GPU B200 nodes send 8/9 of it through one 400 Gb/s NIC per GPU.
  const double nvl72 = run("../gb200-nvl72-alltoall.yaml")[GiB].second;
  const double hgx = run("../gb200-nvl72-alltoall.yaml", "--set cluster.device=b200 --set cluster.nodes=9 "
                                                         "--set cluster.gpus_per_node=8 "
                                                         "--set cluster.network.nics_per_node=8")[GiB]
                         .second;
  EXPECT_GT(nvl72, 600);
  EXPECT_LT(nvl72, 721.8);
  EXPECT_NEAR(hgx, 50, 5); // about one NIC's 50 GB/s
  EXPECT_GT(nvl72 / hgx, 10);
}

TEST(NcclReference, DgxA100SmallMessageLatency)
{
  for (auto [ranks, us] : std::vector<std::pair<int, double>>{{2, 10.0}, {4, 16.9}, {8, 33.7}}) {
    auto rows = run("nccl-dgx-a100-latency.yaml", "--set workload.collective.ranks=" + std::to_string(ranks));
    for (double size : {8.0, 128.0})
      EXPECT_NEAR(rows[size].first * 1e6 / us, 1.0, 0.20) << ranks << " GPUs, " << size << " B";
  }
}

TEST(NcclReference, MultiNodeA100OverHdr)
{
  EXPECT_NEAR(run("nccl-a100-2node-hdr.yaml")[4 * GiB].second / 86.0, 1.0, 0.20);
  EXPECT_NEAR(run("nccl-a100-3node-hdr.yaml")[4 * GiB].second / 84.8, 1.0, 0.20);
}

TEST(NcclReference, H100NvlsTreeSmallMessagesOverTwoNodes)
{
  // 46.3-47.8 us for 4 B - 1 KiB on 2 x 8 H20 (nccl#1244); both backends run the same flows.
  for (const char* backend : {"simgrid", "analytical"})
    for (const auto& [size, row] : run("nccl-h100-2node-nvlstree.yaml", std::string("--backend ") + backend))
      EXPECT_NEAR(row.first * 1e6 / 47.05, 1.0, 0.25) << backend << ", " << size << " B";
}
