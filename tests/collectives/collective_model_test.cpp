#include "models/collectives/collective_model.hpp"
#include "models/collectives/lowering.hpp"
#include "models/collectives/nvls_model.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/isolated_run.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <map>

namespace {

cs::PlatformSpec platform(const char* device, int nodes, int nics, bool nvls = false)
{
  cs::ClusterParams c;
  c.device = device;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.network.nics_per_node = nics;
  c.intra_node.nvls = nvls;
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find(device));
}

std::vector<int> ranks(int n)
{
  std::vector<int> r(n);
  for (int i = 0; i < n; ++i)
    r[i] = i;
  return r;
}

/** `kind` of `bytes` by `algo` over `hosts`, expanded into `g`: its choice, channels and per-rank done tasks. */
struct Expansion {
  cs::CollectiveChoice choice;
  int channels = 1;
  std::vector<std::vector<int>> done; // per rank
};
Expansion expand(cs::TaskGraph& g, const cs::PlatformSpec& p, const std::string& kind, const std::string& algo,
                 std::vector<int> hosts, double bytes)
{
  cs::StreamPool pool(g);
  cs::CollectiveRequest req;
  req.kind = kind;
  req.algorithm = algo;
  req.hosts = std::move(hosts);
  req.bytes = bytes;
  const auto shape = cs::group_shape(p, req.hosts);
  Expansion out;
  out.choice = cs::choose_collective(kind, algo, bytes, shape);
  out.channels = out.choice.protocol.single_channel ? 1 : shape.channels;
  out.done = cs::expand_collective(g, pool, p, req, out.choice);
  return out;
}

// Expands one collective and runs it on the analytical backend.
double expanded_time(const cs::PlatformSpec& p, const std::string& kind, const std::string& algo, double bytes, int n)
{
  cs::TaskGraph g;
  expand(g, p, kind, algo, ranks(n), bytes);
  g.finalize();
  return cs::run_analytical(g, p).makespan;
}

// An all-to-all of `bytes` over every GPU of `p`, expanded into `g` with the direct algorithm.
cs::CollectiveChoice expand_all_to_all(cs::TaskGraph& g, const cs::PlatformSpec& p, int ranks_count, double bytes)
{
  cs::StreamPool pool(g);
  cs::CollectiveRequest req;
  req.kind = "all-to-all";
  req.hosts = ranks(ranks_count);
  req.bytes = bytes;
  auto choice = cs::choose_collective("all-to-all", "direct", req.bytes, cs::group_shape(p, req.hosts));
  cs::expand_collective(g, pool, p, req, choice);
  return choice;
}

} // namespace

TEST(Collectives, BusBandwidthFactorsOfNcclTests)
{
  EXPECT_DOUBLE_EQ(cs::busbw_factor("all-reduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(cs::busbw_factor("reduce-scatter", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(cs::busbw_factor("all-gather", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(cs::busbw_factor("all-to-all", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(cs::busbw_factor("broadcast", 8), 1.0);
}

TEST(Collectives, GroupShapeReadsThePlatform)
{
  auto g = cs::group_shape(platform("a100-sxm4-80gb", 2, 4), ranks(16));
  EXPECT_EQ(g.nodes, 2);
  EXPECT_EQ(g.per_node, 8);
  EXPECT_EQ(g.channels, 4);
  EXPECT_DOUBLE_EQ(g.intra_bw, 240e9);
  EXPECT_DOUBLE_EQ(g.nic_bw, 50e9 * 0.97);
}

TEST(Collectives, RingExpansionMatchesItsClosedFormInsideANode)
{
  // One ring inside an NVSwitch node is contention-free: expansion and closed form agree (up to chunks rounded to
  // whole bytes).
  auto p = platform("h100-sxm5", 1, 8);
  for (const char* kind : {"all-reduce", "reduce-scatter", "all-gather", "broadcast"})
    for (double bytes : {0.0, 4096.0, 64e6, 1e9}) {
      auto choice = cs::choose_collective(kind, "ring", bytes, cs::group_shape(p, ranks(8)));
      EXPECT_NEAR(expanded_time(p, kind, "ring", bytes, 8) / choice.seconds, 1.0, 1e-6) << kind << " " << bytes;
    }
}

TEST(Collectives, ZeroByteMessagesCostLatencyOnly)
{
  auto p = platform("a100-sxm4-40gb", 1, 8);
  double t = expanded_time(p, "all-reduce", "ring", 0, 8);
  EXPECT_NEAR(t, 33.7e-6, 1e-9); // 6.05 us + 14 steps x (0.775 + 1.2) us
}

TEST(Collectives, TunerPrefersLowLatencyForSmallAndBandwidthForLarge)
{
  auto shape = cs::group_shape(platform("a100-sxm4-80gb", 1, 8), ranks(8));
  EXPECT_EQ(cs::choose_collective("all-reduce", "ring", 1024, shape).protocol.name, "ll");
  EXPECT_EQ(cs::choose_collective("all-reduce", "ring", 1e9, shape).protocol.name, "simple");
  EXPECT_EQ(cs::choose_collective("all-reduce", "auto", 1e9, shape).algorithm, "ring");
  auto nvls = cs::group_shape(platform("h100-sxm5", 1, 8, true), ranks(8));
  EXPECT_EQ(cs::choose_collective("all-reduce", "auto", 1e9, nvls).algorithm, "nvls");
  EXPECT_EQ(cs::choose_collective("all-to-all", "auto", 1e9, shape).algorithm, "direct");
}

TEST(Collectives, ImpossibleRequestsAreRejected)
{
  auto shape = cs::group_shape(platform("a100-sxm4-80gb", 1, 8), ranks(8));
  EXPECT_THROW(cs::choose_collective("all-reduce", "bruck", 1e6, shape), std::invalid_argument);
  EXPECT_THROW(cs::choose_collective("all-scatter", "auto", 1e6, shape), std::invalid_argument);
  EXPECT_THROW(cs::choose_collective("all-reduce", "nvls", 1e6, shape), std::invalid_argument); // A100: no NVLS
  EXPECT_THROW(cs::choose_collective("all-to-all", "ring", 1e6, shape), std::invalid_argument);
  EXPECT_THROW(cs::choose_collective("all-reduce", "ring", -1, shape), std::invalid_argument);
  auto six = cs::group_shape(platform("a100-sxm4-80gb", 1, 8), ranks(6));
  EXPECT_THROW(cs::choose_collective("all-reduce", "rhd", 1e6, six), std::invalid_argument);
}

TEST(Collectives, AllToAllAggregatesInterNodeTrafficPerNodePair)
{
  // 4 nodes x 8 GPUs: 8 x 7 intra flows per node; a node's 3 pair volumes cut into 8 equal rail shares make
  // 3 + 8 - 1 = 10 flows per node (the share boundaries that fall inside a pair split it).
  auto p = platform("h100-sxm5", 4, 8);
  cs::TaskGraph g;
  auto choice = expand_all_to_all(g, p, 32, 1 << 30);
  int intra = 0, inter = 0;
  double inter_bytes = 0;
  std::map<int, double> per_nic;
  for (const auto& t : g.tasks())
    if (t.kind == cs::TaskKind::TRANSFER) {
      bool same = p.topology.hop_level(t.host, t.dst) == 0;
      (same ? intra : inter)++;
      if (!same) {
        inter_bytes += t.bytes;
        per_nic[t.host] += t.bytes;
      }
    }
  // Every NIC sends the same share.
  for (const auto& [host, bytes] : per_nic)
    EXPECT_NEAR(bytes / (inter_bytes / 32), 1.0, 1e-6) << host;
  EXPECT_EQ(intra, 4 * 8 * 7);
  EXPECT_EQ(inter, 4 * 10);
  // Every byte bound for another node is carried: 32 ranks x 24/32 of 1 GiB, over the protocol efficiency.
  EXPECT_NEAR(inter_bytes, 32 * 24.0 / 32 * (1 << 30) / choice.protocol.efficiency, 64);
}

TEST(Collectives, AllToAllBackendsAgreeWithinTenPercent)
{
  auto p = platform("h100-sxm5", 4, 8);
  cs::TaskGraph g;
  auto choice = expand_all_to_all(g, p, 32, 1 << 28);
  g.finalize();
  double analytical = cs::run_analytical(g, p).makespan;
  double simgrid = std::stod(cs::run_isolated([&] { return std::to_string(cs::run_simgrid(g, p).makespan); }));
  std::printf("closed %g analytical %g simgrid %g\n", choice.seconds, analytical, simgrid);
  EXPECT_NEAR(analytical / simgrid, 1.0, 0.10);
  EXPECT_NEAR(simgrid / choice.seconds, 1.0, 0.10);
}

TEST(Collectives, NvlsRampFollowsItsPublicSweep)
{
  // The ramp is fitted to Azure's ND H100 v5 sweep (NCCL 2.18.5); its 1 MiB and 16 MiB points must come back.
  double last = 0;
  for (double s = 1024; s <= 16.0 * (1ull << 30); s *= 2) {
    const double e = cs::nvls_size_efficiency(s);
    EXPECT_GE(e, last);
    EXPECT_GT(e, 0.0);
    EXPECT_LE(e, 1.0);
    last = e;
  }
  auto shape = cs::group_shape(platform("h100-sxm5", 1, 8, true), ranks(8));
  for (auto [bytes, busbw] : {std::pair{1048576.0, 43.70}, std::pair{16777216.0, 234.45}}) {
    const double t = cs::collective_time("all-reduce", "nvls", cs::protocols()[1], bytes, shape);
    EXPECT_NEAR(cs::busbw_factor("all-reduce", 8) * bytes / t / 1e9 / busbw, 1.0, 0.01) << bytes;
  }
  // Below the ramp's first point an NVLS all-reduce costs NCCL's NVLS latency and little more.
  EXPECT_NEAR(cs::collective_time("all-reduce", "nvls", cs::protocols()[1], 1024, shape), cs::kNvlsLatency, 1e-7);
}

TEST(Collectives, NvlsExpansionMatchesItsClosedForm)
{
  auto p = platform("h100-sxm5", 1, 8, true);
  auto shape = cs::group_shape(p, ranks(8));
  for (double bytes : {65536.0, 4194304.0, 268435456.0}) {
    const double form = cs::choose_collective("all-reduce", "nvls", bytes, shape).seconds;
    EXPECT_NEAR(expanded_time(p, "all-reduce", "nvls", bytes, 8) / form, 1.0, 1e-6) << bytes;
  }
}

TEST(Collectives, NvlsTreeRunsAcrossNvlsNodes)
{
  auto nvls = platform("h100-sxm5", 2, 8, true);
  auto shape = cs::group_shape(nvls, ranks(16));
  EXPECT_EQ(cs::choose_collective("all-reduce", "auto", 1 << 30, shape).algorithm, "nvls-tree");
  // The switch reduces inside each node, so the NICs carry a 1/8 share: faster than the ring across nodes.
  EXPECT_LT(expanded_time(nvls, "all-reduce", "nvls-tree", 1 << 30, 16),
            0.8 * expanded_time(nvls, "all-reduce", "ring", 1 << 30, 16));
  // One node, or nodes without NVLS, cannot run it.
  EXPECT_THROW(cs::choose_collective("all-reduce", "nvls-tree", 1e6, cs::group_shape(nvls, ranks(8))),
               std::invalid_argument);
  EXPECT_THROW(
      cs::choose_collective("all-reduce", "nvls-tree", 1e6, cs::group_shape(platform("h100-sxm5", 2, 8), ranks(16))),
      std::invalid_argument);
}

TEST(Collectives, NvlsTreeKeepsItsBandwidthAsNodesAreAdded)
{
  // NVIDIA: NVLSTree reaches close to peak at scale, its inter-node part growing only logarithmically (nccl#1649,
  // quoting ~370-380 GB/s busbw from GTC 2024 on 8 x 400 Gb/s H100 nodes). A 2 GiB all-reduce must not lose a
  // quarter of its data per tree level to pipeline fill, as four equal chunks with true dependencies made it
  // (2 nodes 502, 4 nodes 370, 16 nodes 219 GB/s).
  const double bytes = 2.0 * (1 << 30);
  auto busbw = [&](int nodes, bool simgrid) {
    auto p = platform("h100-sxm5", nodes, 8, true);
    const int n = 8 * nodes;
    cs::TaskGraph g;
    expand(g, p, "all-reduce", "nvls-tree", ranks(n), bytes);
    g.finalize();
    const double t = simgrid
                         ? std::stod(cs::run_isolated([&] { return std::to_string(cs::run_simgrid(g, p).makespan); }))
                         : cs::run_analytical(g, p).makespan;
    return cs::busbw_factor("all-reduce", n) * bytes / t / 1e9;
  };
  const double sixteen = busbw(16, false), thirty_two = busbw(32, false);
  for (double bw : {sixteen, thirty_two}) {
    EXPECT_GT(bw, 340);
    EXPECT_LT(bw, 400); // the rails' trees: an inner node's NIC carries twice the node's 1/8 share each way
  }
  EXPECT_NEAR(thirty_two / sixteen, 1.0, 0.05);
  // SimGrid holds each paced transfer to its rate cap too (a mailbox comm with Comm::set_rate): the same pipeline.
  // While caps were only floors on durations there, flows shared beyond their pace and it came out 7% slower.
  const double simgrid = busbw(16, true);
  EXPECT_NEAR(simgrid / sixteen, 1.0, 0.01);
}

TEST(Collectives, NvlsTreeStaysUnderNcclsPerHeadCap)
{
  // NCCL caps each NVLS head's channel at 57.7 GB/s of bus bandwidth over two Hopper nodes and 45.5 over more
  // (tuning.cc): 461.6 and 364 GB/s for 8 heads, below what the switch (2 nodes) and the rails' trees (4 nodes) allow.
  const double bytes = 2.0 * (1 << 30);
  for (int nodes : {2, 4}) {
    auto p = platform("h100-sxm5", nodes, 8, true);
    const int n = 8 * nodes;
    const double cap = nodes == 2 ? 461.6 : 364.0;
    cs::TaskGraph g;
    expand(g, p, "all-reduce", "nvls-tree", ranks(n), bytes);
    g.finalize();
    const double flows = cs::busbw_factor("all-reduce", n) * bytes / cs::run_analytical(g, p).makespan / 1e9;
    EXPECT_LE(flows, cap) << nodes << " nodes";
    EXPECT_GT(flows, 0.95 * cap) << nodes << " nodes";
    const double form = cs::busbw_factor("all-reduce", n) * bytes /
                        cs::choose_collective("all-reduce", "nvls-tree", bytes, cs::group_shape(p, ranks(n))).seconds /
                        1e9;
    EXPECT_LE(form, cap) << nodes << " nodes";
    EXPECT_GT(form, 0.95 * cap) << nodes << " nodes";
  }
  // Four NICs for eight GPUs: four heads, half the cap.
  auto half = platform("h100-sxm5", 2, 4, true);
  EXPECT_LE(cs::busbw_factor("all-reduce", 16) * bytes /
                cs::choose_collective("all-reduce", "nvls-tree", bytes, cs::group_shape(half, ranks(16))).seconds / 1e9,
            230.8);
  // The one public two-node measurement (nccl#1221, 2 x 8 H100, 8 x 400 Gb/s, 4 GiB: ~430 GB/s) within 15%.
  auto two = platform("h100-sxm5", 2, 8, true);
  const double four_gib = 4.0 * (1 << 30);
  cs::TaskGraph g;
  expand(g, two, "all-reduce", "nvls-tree", ranks(16), four_gib);
  g.finalize();
  EXPECT_NEAR(cs::busbw_factor("all-reduce", 16) * four_gib / cs::run_analytical(g, two).makespan / 1e9 / 430, 1.0,
              0.15);
}

TEST(Collectives, RingClosedFormEqualsItsFlowsAcrossLeaves)
{
  // Once a ring spans several leaves its slowest hop crosses the spine, and every step waits for that hop.
  EXPECT_GT(cs::group_shape(platform("h100-sxm5", 64, 8), ranks(512)).inter_lat,
            cs::group_shape(platform("h100-sxm5", 2, 8), ranks(16)).inter_lat);
  for (int nodes : {2, 4, 8, 16, 32, 64, 128}) {
    auto p = platform("h100-sxm5", nodes, 8);
    const int n = 8 * nodes;
    const double form = cs::choose_collective("all-reduce", "ring", 1048576, cs::group_shape(p, ranks(n))).seconds;
    EXPECT_NEAR(expanded_time(p, "all-reduce", "ring", 1048576, n) / form, 1.0, 1e-3) << nodes << " nodes";
  }
}

TEST(Collectives, EcmpCollisionsSeparateOversubscriptionsThatIdealSpreadingMakesEqual)
{
  // 16 x 8 H100, 4 nodes per leaf: a ring crosses each leaf boundary with 8 flows (one per channel and NIC), which
  // 2:1 (16 uplink ports) and 4:1 (8 ports) both carry at full rate when spread ideally. Hashed onto ports, flows
  // collide, and the fewer the ports the more they do.
  auto ring_time = [](const std::string& routing, double oversubscription, int seed, bool simgrid) {
    cs::ClusterParams c;
    c.device = "h100-sxm5";
    c.nodes = 16;
    c.network.levels = {cs::FabricLevel{oversubscription, 0, cs::Seconds{-1}}, cs::FabricLevel{}};
    c.network.routing = routing == "ecmp" ? cs::FabricRouting::ECMP : cs::FabricRouting::IDEAL;
    c.network.ecmp_seed = seed;
    auto p = cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("h100-sxm5"));
    cs::TaskGraph g;
    expand(g, p, "all-reduce", "ring", ranks(128), 256.0 * (1 << 20));
    g.finalize();
    if (!simgrid)
      return cs::run_analytical(g, p).makespan;
    return std::stod(cs::run_isolated([&] { return std::to_string(cs::run_simgrid(g, p).makespan); }));
  };
  EXPECT_DOUBLE_EQ(ring_time("ideal", 2, 0, false), ring_time("ideal", 4, 0, false));
  double two = 0, four = 0;
  for (int seed = 0; seed < 4; ++seed) {
    const double t2 = ring_time("ecmp", 2, seed, true), t4 = ring_time("ecmp", 4, seed, true);
    EXPECT_GE(t4, t2 * (1 - 1e-9)) << seed; // a collision at 16 ports is one at 8 (h mod 16 fixes h mod 8)
    two += t2;
    four += t4;
  }
  const double ideal = ring_time("ideal", 2, 0, true);
  EXPECT_GT(two, 4 * ideal * 1.02);
  EXPECT_GT(four, two * 1.1);
}

TEST(Collectives, RingStepsTravelInAtMostEightSuperSteps)
{
  // Step by step, a 1 MiB all-reduce over 128 x 8 GPUs was 2(n-1) = 2,046 transfers per rank and channel.
  auto p = platform("h100-sxm5", 128, 8);
  cs::TaskGraph g;
  const auto big = expand(g, p, "all-reduce", "ring", ranks(1024), 1048576);
  EXPECT_LE(g.size(), static_cast<std::size_t>(8 * 1024 * big.channels + 1));
  // One join ends it for every rank: none is done before the slowest.
  for (const auto& d : big.done)
    EXPECT_EQ(d, big.done.front());
  // A ring shorter than eight steps keeps one transfer per step: a reduce-scatter over 4 ranks has 3.
  cs::TaskGraph small;
  const auto four = expand(small, p, "reduce-scatter", "ring", ranks(4), 1048576);
  EXPECT_EQ(small.size(), static_cast<std::size_t>(3 * 4 * four.channels + 1));
}

TEST(Collectives, TreesAcrossNodesFollowNcclsShape)
{
  // Across nodes the trees are over nodes, each node a chain behind its head GPU: NCCL's latency
  // 2 ((g - 1) intra + log2(nodes) inter) instead of a ring's 2 (n - 1) steps, so small all-reduces over many nodes
  // go to the tree.
  auto p = platform("h100-sxm5", 16, 8);
  auto shape = cs::group_shape(p, ranks(128));
  const auto& ll = cs::protocols()[0];
  const double intra = ll.step_overhead + shape.intra_lat, inter = ll.step_overhead + shape.inter_lat;
  EXPECT_NEAR(cs::collective_time("all-reduce", "tree", ll, 0, shape), ll.base_latency + 2 * (7 * intra + 4 * inter),
              1e-12);
  EXPECT_EQ(cs::choose_collective("all-reduce", "auto", 1048576, shape).algorithm, "tree");
  EXPECT_LT(expanded_time(p, "all-reduce", "tree", 1048576, 128),
            expanded_time(p, "all-reduce", "ring", 1048576, 128) / 3);
  // Large buffers stay on the ring: its bandwidth term is (n-1)/n of the tree's, and the tree's chunks (at most 16
  // per channel) grow with the buffer, and with them the pipeline's fill.
  EXPECT_EQ(cs::choose_collective("all-reduce", "auto", 8.0 * (1 << 30), shape).algorithm, "ring");
}

TEST(Collectives, Ll128SitsBetweenLlAndSimpleForRingsAndTreesOnly)
{
  // NCCL's tuning table: LL128 costs more per step than LL and less than Simple, and moves 0.92 of Simple's bytes.
  const auto& list = cs::protocols();
  const auto ll128 = std::find_if(list.begin(), list.end(), [](const auto& p) { return p.name == "ll128"; });
  ASSERT_NE(ll128, list.end());
  EXPECT_GT(ll128->step_overhead, list[0].step_overhead);
  EXPECT_LT(ll128->step_overhead, list[1].step_overhead);
  EXPECT_NEAR(ll128->efficiency / list[1].efficiency, 0.92, 1e-12);
  auto a100 = cs::group_shape(platform("a100-sxm4-80gb", 1, 8), ranks(8));
  const auto mid = cs::choose_collective("all-reduce", "auto", 8 << 20, a100);
  EXPECT_EQ(mid.algorithm + "/" + mid.protocol.name, "ring/ll128");
  EXPECT_EQ(cs::choose_collective("all-reduce", "auto", 1 << 30, a100).protocol.name, "simple");
  // NVLS and the all-to-alls are Simple only.
  auto h100 = cs::group_shape(platform("h100-sxm5", 1, 8, true), ranks(8));
  EXPECT_TRUE(std::isinf(cs::collective_time("all-reduce", "nvls", *ll128, 8 << 20, h100)));
  EXPECT_TRUE(std::isinf(cs::collective_time("all-to-all", "direct", *ll128, 8 << 20, h100)));
  // Inside one node the tuner runs rings, as NCCL does (its tree there is a chain).
  EXPECT_EQ(cs::choose_collective("all-reduce", "auto", 4 << 20, a100).algorithm, "ring");
}

TEST(Collectives, SimpleRingsPayTheirPipelineFillThatTheProtocolChoiceDoesNotSee)
{
  // Simple's ring costs 13.3 us a step (fit to the 64 MiB and larger points of both public 8 x A100 sweeps); NCCL's
  // tuner sees 5.51 of it, so LL128 still yields to Simple between 32 and 64 MiB, as NCCL's table has it, and the
  // time of the chosen Simple ring includes the rest.
  auto a100 = cs::group_shape(platform("a100-sxm4-80gb", 1, 8), ranks(8));
  const auto& simple = cs::protocols()[1];
  ASSERT_EQ(simple.name, "simple");
  EXPECT_NEAR((simple.step_overhead + simple.ring_fill) * 1e6, 13.3, 0.05);
  EXPECT_EQ(cs::choose_collective("all-reduce", "auto", 32.0 * (1 << 20), a100).protocol.name, "ll128");
  const auto at64 = cs::choose_collective("all-reduce", "auto", 64.0 * (1 << 20), a100);
  EXPECT_EQ(at64.algorithm + "/" + at64.protocol.name, "ring/simple");
  EXPECT_DOUBLE_EQ(at64.seconds, cs::collective_time("all-reduce", "ring", simple, 64.0 * (1 << 20), a100));
  cs::ProtocolParams unfilled = simple;
  unfilled.ring_fill = 0;
  EXPECT_NEAR(at64.seconds - cs::collective_time("all-reduce", "ring", unfilled, 64.0 * (1 << 20), a100),
              14 * simple.ring_fill, 1e-12);
  // nccl-tests' busbw at 64 MiB: 171.5 GB/s (stas00), 164 with the fill, 192 without it.
  EXPECT_NEAR(1.75 * 64 * (1 << 20) / at64.seconds / 1e9, 164.1, 0.5);
  // Only rings pay it: a tree or a point-to-point send with Simple does not.
  EXPECT_DOUBLE_EQ(cs::collective_time("p2p", "p2p", simple, 1 << 20, a100),
                   cs::collective_time("p2p", "p2p", unfilled, 1 << 20, a100));
}

TEST(Collectives, TreeOverOneGpuPerNodePaysTheProtocolsBaseCost)
{
  // A data-parallel group of tp-8 training: GPU 0 of each of 8 nodes. Without chains the tree's leaves start the
  // collective: at 8 B it costs the protocol's base plus three hops up and three down.
  auto p = platform("a100-sxm4-80gb", 8, 8);
  cs::TaskGraph g;
  cs::StreamPool pool(g);
  cs::CollectiveRequest req;
  req.algorithm = "tree";
  for (int n = 0; n < 8; ++n)
    req.hosts.push_back(8 * n);
  req.bytes = 8;
  const auto choice = cs::choose_collective("all-reduce", "tree", req.bytes, cs::group_shape(p, req.hosts));
  cs::expand_collective(g, pool, p, req, choice);
  g.finalize();
  // At least the base plus a deepest leaf's path up to the root and back (heap order 7-3-1-0, its mirror 0-4-6-7):
  // six hops. (More where a node's second child waits for its first on the node's down stream.)
  const auto& proto = choice.protocol;
  double longest = 0;
  for (const std::vector<int>& path : {std::vector<int>{7, 3, 1, 0, 1, 3, 7}, std::vector<int>{0, 4, 6, 7, 6, 4, 0}}) {
    double t = proto.base_latency;
    for (std::size_t i = 0; i + 1 < path.size(); ++i)
      t += proto.step_overhead + p.topology.route_latency(8 * path[i], 8 * path[i + 1]);
    longest = std::max(longest, t);
  }
  EXPECT_GE(cs::run_analytical(g, p).makespan, longest);
}

TEST(Lowering, TheClosedFormSizeIsCountedWithoutLowering)
{
  // A 1,024-GPU MoE run chooses closed forms by this count before lowering anything: it must equal the closed-form
  // lowering's tasks plus what the collectives' expansions would add, here where every member has one predecessor
  // (no joins). An all-reduce over 16 GPUs, an uneven all-to-all-v over 8, and a broadcast with a rank not simulated.
  const auto p = platform("h100-sxm5", 2, 8);
  cs::TaskGraph g;
  std::vector<int> streams, computed;
  for (int h = 0; h < 16; ++h) {
    streams.push_back(g.add_stream(h, "comm"));
    computed.push_back(g.add_compute(g.add_stream(h, "compute"), 1e-3, "k", "", {}));
  }
  cs::CollectiveSpec all_reduce;
  all_reduce.bytes = 64e6;
  all_reduce.hosts = ranks(16);
  g.add_collective(all_reduce, streams, computed);
  cs::CollectiveSpec v;
  v.kind = "all-to-all";
  v.hosts = ranks(8);
  std::vector<double> sizes;
  for (int i = 0; i < 64; ++i)
    sizes.push_back(1e5 * (1 + i % 7));
  v.matrix = sizes;
  g.add_collective(v, std::vector<int>(streams.begin(), streams.begin() + 8),
                   std::vector<int>(computed.begin(), computed.begin() + 8));
  cs::CollectiveSpec bcast;
  bcast.kind = "broadcast";
  bcast.bytes = 1e6;
  bcast.hosts = ranks(16);
  std::vector<int> some = streams;
  some[15] = -1;
  g.add_collective(bcast, some, computed);
  const auto lowered = cs::lower_collectives(g, p, cs::CollectivePricing::CLOSED_FORM);
  EXPECT_DOUBLE_EQ(cs::closed_form_lowering_size(g, p),
                   double(lowered.graph.size()) + lowered.closed_form_expansion_tasks);
  EXPECT_GT(lowered.closed_form_expansion_tasks, 8.0 * 7); // the expansions are counted, not only the delays
}

TEST(Collectives, NodeTreesShareEachChannelsChainUpWithoutChangingTheAnswer)
{
  // A channel's two node trees climb each node's chain with the same chunks at the same time; one transfer of both
  // halves per hop takes 8,128 transfers and joins to 6,336 on 16 x 8 H100 (1 MiB). SimGrid gives the time the separate
  // transfers gave, to the last digit (145.66020803167287 us, measured with them on 2026-12-03).
  auto p = platform("h100-sxm5", 16, 8);
  cs::TaskGraph g;
  const auto tree = expand(g, p, "all-reduce", "tree", ranks(128), 1048576);
  ASSERT_EQ(tree.choice.protocol.name, "ll128");
  g.finalize();
  EXPECT_EQ(g.size(), 6336u);
  const double simgrid = std::stod(cs::run_isolated([&] {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", cs::run_simgrid(g, p).makespan);
    return std::string(text);
  }));
  EXPECT_NEAR(simgrid / 145.66020803167287e-6, 1.0, 1e-12);
}
