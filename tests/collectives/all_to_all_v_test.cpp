// All-to-all-v (MoE dispatch and combine) as flows: when the re-pairing applies, that it keeps what every NIC carries,
// and that re-paired flows, per-pair flows and the closed form give one answer.
#include "models/collectives/all_to_all_chains.hpp"
#include "models/collectives/all_to_all_v.hpp"
#include "models/collectives/collective_algorithm.hpp"
#include "models/collectives/lowering.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/isolated_run.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <memory>
#include <random>
#include <sstream>
#include <tuple>

namespace {

cs::PlatformSpec platform(int nodes, double oversubscription = 1, const std::string& routing = "ideal",
                          const std::string& model = "ideal")
{
  cs::ClusterParams c;
  c.device = "h100-sxm5";
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.network.nics_per_node = 8;
  c.network.levels = {cs::FabricLevel{oversubscription, 0, cs::Seconds{-1}}, cs::FabricLevel{}};
  c.network.routing = routing == "ecmp" ? cs::FabricRouting::ECMP : cs::FabricRouting::IDEAL;
  c.network.model = model == "lv08" ? cs::NetworkModel::LV08 : cs::NetworkModel::IDEAL;
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("h100-sxm5"));
}

// `per_machine` ranks on each of `machines` nodes (GPUs 0, 1, ... of each).
std::vector<int> hosts(int machines, int per_machine)
{
  std::vector<int> h;
  for (int m = 0; m < machines; ++m)
    for (int g = 0; g < per_machine; ++g)
      h.push_back(8 * m + g);
  return h;
}

// MoE-like routing: every rank sends every other some bytes, the ranks holding hot experts receiving up to ~4x more.
std::vector<double> skewed(int n, unsigned seed)
{
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> noise(0.5, 1.5);
  std::vector<double> m(std::size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j)
        m[std::size_t(i) * n + j] = 1e5 * noise(gen) / std::sqrt(1.0 + (j * 7 + seed) % n);
  return m;
}

struct Expanded {
  cs::TaskGraph graph;
  std::vector<std::vector<int>> done;
};

Expanded expand(const cs::PlatformSpec& p, const std::vector<int>& h, const std::vector<double>& m)
{
  Expanded e;
  cs::StreamPool pool(e.graph, "a2a");
  cs::CollectiveRequest req;
  req.kind = "all-to-all";
  req.hosts = h;
  req.matrix = m;
  e.done = cs::expand_all_to_all_v(e.graph, pool, p, req);
  e.graph.finalize();
  return e;
}

double closed_form(const cs::PlatformSpec& p, const std::vector<int>& h, const std::vector<double>& m)
{
  return cs::all_to_all_v_seconds(m, cs::group_shape(p, h), cs::all_to_all_v_protocol(), cs::machines_of(p, h));
}

// On SimGrid: the analytical backend holds each flow's links for its whole transfer, so it serialises what shares
// a NIC, and the training builder prices all-to-all-v by its closed form there.
double makespan(const Expanded& e, const cs::PlatformSpec& p)
{
  return std::stod(cs::run_isolated([&] { return std::to_string(cs::run_simgrid(e.graph, p).makespan); }));
}

} // namespace

TEST(AllToAllV, RepairsOnlyWhereTheFabricBindsAtTheNicsAlone)
{
  const auto m = skewed(16, 1);
  EXPECT_TRUE(cs::all_to_all_v_repairs(platform(16), hosts(16, 1), m));
  EXPECT_FALSE(cs::all_to_all_v_repairs(platform(16, 2), hosts(16, 1), m));                  // 2:1 uplinks bind
  EXPECT_FALSE(cs::all_to_all_v_repairs(platform(16, 1, "ecmp"), hosts(16, 1), m));          // hash collisions
  EXPECT_FALSE(cs::all_to_all_v_repairs(platform(16, 1, "ideal", "lv08"), hosts(16, 1), m)); // per-flow factors
  EXPECT_FALSE(cs::all_to_all_v_repairs(platform(16), hosts(4, 4), m));                      // four machines
  auto sparse = m;
  sparse[3 * 16 + 9] = 0; // one pair exchanges nothing: ranks 3 and 9 do not wait for each other
  EXPECT_FALSE(cs::all_to_all_v_repairs(platform(16), hosts(16, 1), sparse));
  auto background = platform(16);
  background.background[0] = cs::LinkAvailability{};
  EXPECT_FALSE(cs::all_to_all_v_repairs(background, hosts(16, 1), m));
}

TEST(AllToAllV, RepairedFlowsCarryWhatEveryRankSendsAndReceivesAcrossMachines)
{
  const auto p = platform(32);
  const double efficiency = cs::all_to_all_v_protocol().efficiency;
  for (int per_machine : {1, 2, 4})
    for (unsigned seed = 1; seed <= 20; ++seed) {
      const int machines = 8 + static_cast<int>(seed) % 24, n = machines * per_machine;
      const auto h = hosts(machines, per_machine);
      const auto m = skewed(n, seed);
      ASSERT_TRUE(cs::all_to_all_v_repairs(p, h, m)) << n << " ranks, seed " << seed;
      const auto e = expand(p, h, m);
      std::vector<double> out(n, 0.0), in(n, 0.0), want_out(n, 0.0), want_in(n, 0.0);
      int across = 0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i / per_machine != j / per_machine) {
            want_out[i] += m[std::size_t(i) * n + j] / efficiency;
            want_in[j] += m[std::size_t(i) * n + j] / efficiency;
          }
      for (const cs::Task& t : e.graph.tasks())
        if (t.kind == cs::TaskKind::TRANSFER && t.host / 8 != t.dst / 8) {
          ++across;
          out[(t.host / 8) * per_machine + t.host % 8] += t.bytes;
          in[(t.dst / 8) * per_machine + t.dst % 8] += t.bytes;
        }
      for (int r = 0; r < n; ++r) {
        EXPECT_NEAR(out[r], want_out[r], n) << r; // transfers carry whole bytes
        EXPECT_NEAR(in[r], want_in[r], n) << r;
      }
      EXPECT_LE(across, 3 * n) << "from n (n - 1) = " << n * (n - 1);
    }
}

TEST(AllToAllV, RepairedAndPerPairFlowsOnSimgridGiveTheClosedForm)
{
  // 16 machines, one rank each (a TP-8 group's first GPU, as the MoE builder simulates). The same fabric with the
  // re-pairing turned off runs the n (n - 1) flows of each pair.
  const auto p = platform(16);
  auto per_pair = platform(16);
  per_pair.fabric_non_blocking = false;
  const auto h = hosts(16, 1);
  for (unsigned seed : {1u, 2u}) {
    const auto m = skewed(16, seed);
    const double form = closed_form(p, h, m);
    const auto repaired = expand(p, h, m), pairs = expand(per_pair, h, m);
    EXPECT_LT(repaired.graph.size(), pairs.graph.size() / 4);
    EXPECT_NEAR(makespan(repaired, p) / form, 1.0, 0.01);
    // Each of a rank's 15 flows pays the protocol's per-transfer overhead, eight at a time.
    EXPECT_NEAR(makespan(pairs, per_pair) / form, 1.0, 0.06);
  }
}

TEST(AllToAllV, ARanksPartEndsWithItsSendsAndWaitsForItsPeersBuffers)
{
  // Four machines (per-pair flows). Rank 3 becomes ready at 1 s: nothing is sent to it before, and rank 0, which
  // sends to it but receives nothing from it, is not done before its send has arrived.
  const auto p = platform(4);
  cs::TaskGraph g;
  cs::StreamPool pool(g, "a2a");
  const int late = g.add_delay(g.add_stream(24, "compute"), 1.0, "late", {});
  cs::CollectiveRequest req;
  req.kind = "all-to-all";
  req.hosts = hosts(4, 1);
  req.matrix = skewed(4, 3);
  req.matrix[3 * 4 + 0] = 0; // rank 0 hears nothing from rank 3, only sends to it
  req.ready = {-1, -1, -1, late};
  const auto done = cs::expand_all_to_all_v(g, pool, p, req);
  g.finalize();
  const auto t = cs::run_analytical(g, p);
  for (int r = 0; r < 4; ++r)
    EXPECT_GT(t.end[done[r][0]], 1.0) << r;
  int into_late = 0;
  for (std::size_t k = 0; k < g.size(); ++k)
    if (g.task(static_cast<int>(k)).kind == cs::TaskKind::TRANSFER && g.task(static_cast<int>(k)).dst == 24) {
      ++into_late;
      EXPECT_GE(t.start[k], 1.0);
    }
  EXPECT_EQ(into_late, 3);
}

// 8 machines, four a leaf, leaves joined `over`:1.
cs::PlatformSpec two_leaves(double over)
{
  cs::ClusterParams c;
  c.device = "h100-sxm5";
  c.nodes = 8;
  c.gpus_per_node = 8;
  c.network.nics_per_node = 8;
  c.network.levels = {cs::FabricLevel{over, 4, cs::Seconds{-1}}, cs::FabricLevel{}};
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("h100-sxm5"));
}

TEST(AllToAllV, WhereTheUplinksBindTheClosedFormReplaysTheFlowsAsSimgridSharesThem)
{
  // A uniform all-to-all over the 64 GPUs of two leaves sends half its off-machine bytes across the leaves' uplinks.
  // The flows on SimGrid (fair sharing) are the reference. At 1:1 the fabric binds at the NICs alone: the flows
  // re-pair and the NICs' closed form stands (the lowering asks for the fabric's term only where copies share an
  // oversubscribed level). At 2:1 and 4:1 the closed form is the per-pair flows' fluid replay.
  for (double over : {1.0, 2.0, 4.0}) {
    const auto p = two_leaves(over);
    const auto h = hosts(8, 8);
    const std::vector<double> m(64 * 64, 1 << 19);
    const auto& proto = cs::all_to_all_v_protocol();
    const cs::GroupShape shape = cs::group_shape(p, h);
    const double fabric = over > 1 ? cs::all_to_all_v_fabric_seconds(m, p, h, {0}, proto) : 0.0;
    const double form = cs::all_to_all_v_seconds(m, shape, proto, cs::machines_of(p, h), fabric);
    const double flows = makespan(expand(p, h, m), p), nics_alone = closed_form(p, h, m);
    // Measured 2026-12-05: +0.04%, +0.06% and +0.12% (the windows of eight distances before: +0.2%, -6.6%, -1.8%);
    // the NICs alone: 0%, -31%, -58%.
    EXPECT_NEAR(form / flows, 1.0, 0.01) << over;
    if (over > 1) {
      EXPECT_LT(nics_alone / flows, 0.75) << over;
      // One pair empty: rank 0's peers shift by one stream, the symmetry breaks, and the flows keep their max-min
      // shares only if the simulator recomputes every rate at every event (SimGrid's lazy update was 11% long at 2:1).
      auto sparse = m;
      sparse[1] = 0;
      const double replay = cs::all_to_all_v_seconds(sparse, shape, proto, cs::machines_of(p, h),
                                                     cs::all_to_all_v_fabric_seconds(sparse, p, h, {0}, proto));
      EXPECT_NEAR(replay / makespan(expand(p, h, sparse), p), 1.0, 0.01) << over;
    }
  }
}

TEST(AllToAllV, TheReplayFollowsSkewedRoutingAndACopyOfTheGroupOnTheSameUplinks)
{
  // Skewed sizes (hot ranks receive up to ~4x), and a group of 32 on machines 0, 1, 4 and 5 with its copy at offset
  // 16 (machines 2, 3, 6 and 7) loading the same uplinks: against both groups' flows run together on SimGrid.
  for (double over : {2.0, 4.0}) {
    const auto p = two_leaves(over);
    const auto& proto = cs::all_to_all_v_protocol();
    {
      const auto h = hosts(8, 8);
      auto m = skewed(64, 5);
      for (double& b : m)
        b *= 8; // megabytes a pair, where bandwidth decides
      const double fabric = cs::all_to_all_v_fabric_seconds(m, p, h, {0}, proto);
      const double form = cs::all_to_all_v_seconds(m, cs::group_shape(p, h), proto, cs::machines_of(p, h), fabric);
      EXPECT_NEAR(form / makespan(expand(p, h, m), p), 1.0, 0.01) << over;
    }
    std::vector<int> h, copy;
    for (int machine : {0, 1, 4, 5})
      for (int g = 0; g < 8; ++g) {
        h.push_back(8 * machine + g);
        copy.push_back(8 * machine + g + 16);
      }
    auto m = skewed(32, 7);
    for (double& b : m)
      b *= 8;
    const double fabric = cs::all_to_all_v_fabric_seconds(m, p, h, {0, 16}, proto);
    ASSERT_GT(fabric, 0) << over;
    const double form = cs::all_to_all_v_seconds(m, cs::group_shape(p, h), proto, cs::machines_of(p, h), fabric);
    Expanded both;
    cs::StreamPool pool(both.graph, "a2a");
    for (const auto* group : {&h, &copy}) {
      cs::CollectiveRequest req;
      req.kind = "all-to-all";
      req.hosts = *group;
      req.matrix = m;
      cs::expand_all_to_all_v(both.graph, pool, p, req);
    }
    both.graph.finalize();
    EXPECT_NEAR(form / makespan(both, p), 1.0, 0.01) << over;
  }
}

TEST(AllToAllV, TheFabricTermCountsEachCopyOfTheGroupOnce)
{
  // Two groups of 32 on 8 machines, leaves of 4 machines joined 4:1, each group on both leaves (machines 0, 1, 4, 5
  // and its copy at offset 16 on 2, 3, 6, 7), so the copy loads the same uplinks. An offset that lands on the group's
  // own members (8) or past the last GPU (24) is no copy.
  cs::ClusterParams c;
  c.device = "h100-sxm5";
  c.nodes = 8;
  c.gpus_per_node = 8;
  c.network.nics_per_node = 8;
  c.network.levels = {cs::FabricLevel{4, 4, cs::Seconds{-1}}, cs::FabricLevel{}};
  const auto p = cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("h100-sxm5"));
  std::vector<int> h;
  for (int machine : {0, 1, 4, 5})
    for (int g = 0; g < 8; ++g)
      h.push_back(8 * machine + g);
  const std::vector<double> m(32 * 32, 1 << 19);
  const auto& proto = cs::all_to_all_v_protocol();
  const double alone = cs::all_to_all_v_fabric_seconds(m, p, h, {0}, proto);
  const double two = cs::all_to_all_v_fabric_seconds(m, p, h, {0, 16}, proto);
  EXPECT_NEAR(cs::all_to_all_v_fabric_seconds(m, p, h, {0, 8, 16, 24}, proto), two, 1e-15);
  // Alone, the uplink carries 16 ranks' crossings; with the copy, 32 through the same uplink: twice the bytes.
  EXPECT_GT(two, 1.6 * alone);
  EXPECT_LT(two, 2.0 * alone * (1 + 1e-9));
}

TEST(AllToAllV, ATransposedSpecLowersAsItsTransposeWrittenOut)
{
  // A combine shares its dispatch's sizes and reads them transposed (CollectiveSpec::transposed): priced by its
  // closed form or as flows, it lowers to what the transpose written out gives, traffic per link included.
  const auto p = platform(2);
  const auto h = hosts(2, 4);
  const int n = static_cast<int>(h.size());
  const auto m = skewed(n, 3);
  std::vector<double> t(m.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      t[std::size_t(i) * n + j] = m[std::size_t(j) * n + i];
  auto lower = [&](const std::vector<double>& sizes, bool transposed, cs::CollectivePricing pricing) {
    cs::TaskGraph g;
    std::vector<int> streams;
    for (int host : h)
      streams.push_back(g.add_stream(host, "a2a"));
    cs::CollectiveSpec spec;
    spec.kind = "all-to-all";
    spec.algorithm = "direct";
    spec.hosts = h;
    spec.matrix = sizes;
    spec.transposed = transposed;
    g.add_collective(spec, streams, {});
    return cs::lower_collectives(g, p, pricing);
  };
  for (auto pricing : {cs::CollectivePricing::CLOSED_FORM, cs::CollectivePricing::FLOWS}) {
    const auto read = lower(m, true, pricing), written = lower(t, false, pricing);
    ASSERT_EQ(read.graph.size(), written.graph.size());
    for (std::size_t id = 0; id < read.graph.size(); ++id) {
      const auto &a = read.graph.task(int(id)), &b = written.graph.task(int(id));
      EXPECT_EQ(std::tie(a.host, a.dst, a.seconds, a.bytes), std::tie(b.host, b.dst, b.seconds, b.bytes)) << id;
    }
    EXPECT_EQ(
        std::tie(read.closed_form_intra_bytes, read.closed_form_inter_bytes, read.closed_form_link_bytes),
        std::tie(written.closed_form_intra_bytes, written.closed_form_inter_bytes, written.closed_form_link_bytes));
  }
  // And not as the matrix read the other way: the sizes are not symmetric.
  EXPECT_NE(lower(m, false, cs::CollectivePricing::FLOWS).graph.task(0).bytes,
            lower(m, true, cs::CollectivePricing::FLOWS).graph.task(0).bytes);
}

// On SimGrid, `steps` all-to-alls of `m` one after another on `h`, each rank starting the next 200 us of its own work
// after its part of the one before ends: per all-to-all, the time from its last rank ready to its last rank done.
std::vector<double> chain_on_simgrid(const cs::PlatformSpec& p, const std::vector<int>& h, const std::vector<double>& m,
                                     int steps)
{
  const int n = static_cast<int>(h.size());
  cs::TaskGraph graph;
  cs::CollectiveRequest req;
  req.kind = "all-to-all";
  req.hosts = h;
  req.matrix = m;
  std::vector<int> work(n);
  for (int r = 0; r < n; ++r)
    work[r] = graph.add_stream(h[r], "compute");
  std::vector<std::unique_ptr<cs::StreamPool>> pools;
  std::vector<std::vector<int>> after(steps); // per step, per rank: the work that follows its part
  for (int k = 0; k < steps; ++k) {
    pools.push_back(std::make_unique<cs::StreamPool>(graph, "a2a" + std::to_string(k)));
    req.ready = k > 0 ? after[k - 1] : std::vector<int>{};
    const auto done = cs::expand_all_to_all_v(graph, *pools.back(), p, req);
    for (int r = 0; r < n; ++r) {
      after[k].push_back(graph.add_delay(work[r], 200e-6, "work", {}));
      for (int d : done[r])
        graph.add_dependency(d, after[k][r]);
    }
  }
  graph.finalize();
  const std::string spans = cs::run_isolated([&] {
    const auto t = cs::run_simgrid(graph, p);
    std::string out;
    for (int k = 0; k < steps; ++k) {
      double last_ready = 0, last_done = 0;
      for (int r = 0; r < n; ++r) {
        last_ready = k > 0 ? std::max(last_ready, t.end[after[k - 1][r]]) : 0.0;
        last_done = std::max(last_done, t.start[after[k][r]]);
      }
      out += std::to_string(last_done - last_ready) + " ";
    }
    return out;
  });
  std::istringstream in(spans);
  std::vector<double> seconds(steps);
  for (double& s : seconds)
    in >> s;
  return seconds;
}

TEST(AllToAllV, AChainStartsEachAllToAllAsTheOneBeforeLeftItsRanksAsSimgridDoes)
{
  // 64 GPUs over two leaves. Each rank starts the next all-to-all as far behind the first as it finished the last,
  // so the spread carries on: at 2:1 the fifth takes about twice the first, at 4:1 a little less than the first.
  // Measured 2026-12-06, SimGrid against AllToAllChains, per step: 2:1 0.9189/0.9189, 0.9502/0.9502, 1.0250/1.0250,
  // 1.0377/1.0376, 1.8111/1.8113 ms; 4:1 1.5425/1.5425, 1.5324/1.5324, 1.5188/1.5188, 1.5252/1.5252, 1.5185/1.5185.
  const auto h = hosts(8, 8);
  const std::vector<double> m(64 * 64, 1 << 19);
  for (double over : {2.0, 4.0}) {
    const auto p = two_leaves(over);
    const auto reference = chain_on_simgrid(p, h, m, 5);
    cs::AllToAllChains chains(p, {0});
    std::vector<double> replayed;
    for (int k = 0; k < 5; ++k) {
      replayed.push_back(chains.next(
          h, &m, [&] { return m; }, cs::all_to_all_v_protocol()));
      EXPECT_NEAR(replayed[k] / reference[k], 1.0, 0.002) << over << " step " << k;
    }
    if (over == 2.0)
      EXPECT_GT(replayed[4] / replayed[0], 1.5); // all starting together would keep the first's time
    else
      EXPECT_LT(replayed[4] / replayed[0], 0.995);
    // A chain replays its first kSteps (16) steps; after them each step takes the mean of steps 8-15. Measured
    // 2026-12-06 over 40 steps: at 2:1 SimGrid settles by the ninth into a cycle of two, 1.5970 and 1.5750 ms (mean
    // 1.5860), and the replay with it (1.5969, 1.5748); at 4:1 both stay within 1.519-1.527. Holding the eighth's
    // spread, as the chain did before, would repeat 1.5723 from then on.
    static_assert(cs::AllToAllChains::kSteps == 16);
    for (int k = 5; k < 24; ++k)
      replayed.push_back(chains.next(
          h, &m, [&] { return m; }, cs::all_to_all_v_protocol()));
    double window = 0;
    for (int k = 8; k < 16; ++k)
      window += replayed[k] / 8;
    if (over == 2.0) {
      for (int k = 9; k + 2 < 16; ++k)
        EXPECT_NEAR(replayed[k + 2] / replayed[k], 1.0, 1e-6) << k;
      EXPECT_NEAR(replayed[14] * 1e3, 1.5969, 5e-4);
      EXPECT_NEAR(replayed[15] * 1e3, 1.5748, 5e-4);
      EXPECT_NEAR(window * 1e3, 1.5860, 5e-4);
    } else {
      for (int k = 5; k < 16; ++k)
        EXPECT_NEAR(replayed[k] * 1e3, 1.523, 0.006) << k;
    }
    for (int k = 16; k < 24; ++k)
      EXPECT_DOUBLE_EQ(replayed[k], window) << k;
    // Another group's chain starts with its ranks together.
    const auto half = hosts(8, 4);
    const std::vector<double> quarter(32 * 32, 1 << 19);
    EXPECT_EQ(chains.next(
                  half, &quarter, [&] { return quarter; }, cs::all_to_all_v_protocol()),
              cs::all_to_all_v_fabric_seconds(quarter, p, half, {0}, cs::all_to_all_v_protocol()));
  }
}
