#include "base/registry.hpp"
#include "models/cost/kernel_cost_model.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/platform/simgrid_platform.hpp"
#include "tests/training_helpers.hpp"
#include "workloads/training/stage_costs.hpp"

#include "tests/test_models.hpp"
#include "tests/test_support.hpp"
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <gtest/gtest.h>
#include <sstream>

namespace {

using cs::testing::h100;

std::string encode(const cs::Timeline& tl)
{
  std::ostringstream out;
  out.precision(17);
  for (std::size_t i = 0; i < tl.start.size(); ++i)
    out << tl.start[i] << ' ' << tl.end[i] << '\n';
  return out.str();
}

cs::Timeline decode(const std::string& text)
{
  cs::Timeline tl;
  std::istringstream in(text);
  for (double a, b; in >> a >> b;) {
    tl.start.push_back(a);
    tl.end.push_back(b);
    tl.makespan = std::max(tl.makespan, b);
  }
  return tl;
}

cs::Timeline simgrid_timeline(const cs::TaskGraph& g, const cs::PlatformSpec& p)
{
  return decode(cs::run_isolated([&] { return encode(cs::run_simgrid(g, p)); }));
}

double relative(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

cs::PlatformSpec platform(int nodes, int gpus, int nics)
{
  cs::ClusterParams c;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.network.nics_per_node = nics;
  c.network.latency = cs::Seconds{1e-6};
  return cs::build_platform_spec(c, h100());
}

} // namespace

TEST(Backends, AgreeOnAContentionFreeTrainingIteration)
{
  // Data-parallel training over 2 nodes x 4 GPUs with one NIC each: a single ring, every link direction used by
  // one transfer at a time.
  cs::TrainingParams w;
  w.model = cs::testing::model(4, 512, 2048, 8, 256, 1000, "bf16", "none");
  w.batch = cs::BatchParams{32, 2};
  w.iterations = 2;
  w.gradient_bucket = cs::Bytes{1e6};
  auto cost = cs::make_cost_model(h100(), *cs::builtin_profile("h100-sxm5"));
  auto p = platform(2, 4, 1);
  const auto built = cs::testing::build_transformer_training(w, *cost, 8, 1, "1f1b", p);
  const auto& training = built.training;
  auto analytical = cs::run_analytical(training.graph, p);
  auto simgrid = simgrid_timeline(training.graph, p);
  ASSERT_EQ(simgrid.end.size(), training.graph.size());
  double worst = 0;
  for (std::size_t i = 0; i < training.graph.size(); ++i) {
    worst = std::max(worst, relative(simgrid.end[i], analytical.end[i]));
    if (analytical.start[i] > 0)
      worst = std::max(worst, relative(simgrid.start[i], analytical.start[i]));
  }
  EXPECT_LT(worst, 1e-9);
  EXPECT_GT(training.buckets, 1);
  EXPECT_LT(relative(simgrid.makespan, analytical.makespan), 1e-9);
}

TEST(Backends, TwoFlowsOnOneBottleneckTakeTwiceAsLongUnderSimgrid)
{
  // One NIC per node: gpu0 -> node1/gpu0 and gpu1 -> node1/gpu1 both cross node0/nic0 and node1/nic0.
  auto p = platform(2, 2, 1);
  const double bytes = 1e9;
  auto one = [&](bool both) {
    cs::TaskGraph g;
    g.add_transfer(g.add_stream(0, "comm"), 0, 2, bytes, "a", {});
    if (both)
      g.add_transfer(g.add_stream(1, "comm"), 1, 3, bytes, "b", {});
    g.finalize();
    return g;
  };
  auto single = one(false), pair = one(true);
  const double latency = p.topology.route_latency(0, 2);
  double t1 = simgrid_timeline(single, p).makespan;
  double t2 = simgrid_timeline(pair, p).makespan;
  EXPECT_NEAR(t1, latency + bytes / (50e9 * 0.97), 1e-12);
  EXPECT_NEAR((t2 - latency) / (t1 - latency), 2.0, 1e-9);
  // The analytical backend serialises the two flows instead: the second goes out once the first's bytes have left
  // (the latency holds no bandwidth), so both backends end at latency + twice the bytes' time.
  auto a = cs::run_analytical(pair, p);
  EXPECT_NEAR(a.end[0], t1, 1e-12);
  EXPECT_NEAR(a.start[1], a.end[0] - latency, 1e-12);
  EXPECT_NEAR(a.makespan, t2, 1e-12);
}

TEST(Backends, ARateCappedFlowLeavesTheRestOfItsLinkToOthersUnderSimgrid)
{
  // Two flows share node0/nic0; one is capped at a quarter of the link, so the other takes the remaining three
  // quarters and ends when 1 GB has moved at that rate. While a cap was only a floor on the duration, the two shared
  // the link half and half and the uncapped flow took 1.5x as long.
  auto p = platform(2, 2, 1);
  const double bytes = 1e9, link = 50e9 * 0.97;
  cs::TaskGraph g;
  g.add_transfer(g.add_stream(0, "comm"), 0, 2, bytes, "free", {});
  g.add_transfer(g.add_stream(1, "comm"), 1, 3, bytes, "capped", {}, 0.0, link / 4);
  g.finalize();
  const double latency = p.topology.route_latency(0, 2);
  for (const char* model : {"ideal", "lv08"}) {
    p.network_model = std::string(model) == "lv08" ? cs::NetworkModel::LV08 : cs::NetworkModel::IDEAL;
    const cs::Timeline tl = simgrid_timeline(g, p);
    if (std::string(model) == "ideal") {
      EXPECT_NEAR(tl.end[0], latency + bytes / (0.75 * link), 1e-9) << model;
      EXPECT_NEAR(tl.end[1], latency + bytes / (link / 4), 1e-9) << model;
    }
    // LV08 scales rates by its own factors (28.7 ms here); the capped flow still keeps to its cap, and the other
    // takes the rest instead of half (41 ms).
    EXPECT_LT(tl.end[0], 1.1 * bytes / (0.75 * link)) << model;
    EXPECT_GE(tl.end[1], bytes / (link / 4)) << model;
  }
}

TEST(Backends, SimgridLv08WorkedExample)
{
  // validation.md §1: 100 kB over one 10 ms, 1 Mb/s link under LV08 completes in 0.996079 s. LV08 was fit on
  // shared (half-duplex) links, where the ACK cross-traffic takes 1/1.05 of the capacity from the data.
  cs::PlatformSpec p;
  p.device = &h100();
  p.machines = 2;
  p.network_model = cs::NetworkModel::LV08;
  int a = p.topology.add_host("a", 0, 0), b = p.topology.add_host("b", 1, 0);
  p.topology.add_edge(a, b, p.topology.add_link("wire", 1e6 / 8, 10e-3, "test", false));
  cs::TaskGraph g;
  g.add_transfer(g.add_stream(0, "comm"), 0, 1, 100e3, "send", {});
  g.finalize();
  EXPECT_NEAR(simgrid_timeline(g, p).makespan, 0.996079, 1e-6);
  // The ideal model is plain latency + size / bandwidth: 0.01 + 0.8 = 0.81 s.
  p.network_model = cs::NetworkModel::IDEAL;
  EXPECT_NEAR(simgrid_timeline(g, p).makespan, 0.81, 1e-12);
  EXPECT_NEAR(cs::run_analytical(g, p).makespan, 0.81, 1e-12);
}

TEST(Backends, ComputeSharesAGpuUnderSimgrid)
{
  // Two 1 s kernels on two streams of one GPU: SimGrid shares the device, both end at 2 s.
  auto p = platform(1, 2, 2);
  cs::TaskGraph g;
  g.add_compute(g.add_stream(0, "compute"), 1.0, "k1", "fixed", {});
  g.add_compute(g.add_stream(0, "compute2"), 1.0, "k2", "fixed", {});
  g.finalize();
  auto tl = simgrid_timeline(g, p);
  EXPECT_NEAR(tl.end[0], 2.0, 1e-9);
  EXPECT_NEAR(tl.end[1], 2.0, 1e-9);
}

TEST(TensorParallel, CollectivesArePricedAlikeUnderDataAndPipelineParallelism)
{
  // Megatron's two blocking TP collectives per block pass, by the tuner's closed form, folded into each layer's
  // passes whether the layers run as one data-parallel stage or as pipeline stages: the same seconds per layer.
  cs::TrainingParams w;
  w.model = cs::testing::model(4, 512, 2048, 8, 256, 1000, "bf16", "none");
  w.batch = cs::BatchParams{8, 2};
  w.parallel.tp = 2;
  w.framework.async_tensor_model_parallel_allreduce = false; // every collective blocking, as Megatron-LM 2021 ran
  auto cost = cs::make_cost_model(h100(), *cs::builtin_profile("h100-sxm5"));
  auto p = platform(1, 8, 8);
  const double tp = cs::tp_block_collective_seconds(w.model, 2, 2, false, p);
  ASSERT_GT(tp, 0);
  const auto data = cs::transformer_stages(w, *cost, p, cs::testing::stage_shape(w, 4, 1));
  const auto pipe = cs::transformer_stages(w, *cost, p, cs::testing::stage_shape(w, 2, 2));
  cs::TrainingParams alone = w;
  alone.parallel.tp = 1;
  const auto one = cs::transformer_stages(alone, *cost, p, cs::testing::stage_shape(alone, 4, 1));
  for (const auto* set : {&data, &pipe}) {
    const cs::Segment& layer = set->stages[0].segments[1]; // after the embedding
    EXPECT_EQ(layer.name, "layer");
    EXPECT_DOUBLE_EQ(layer.forward_s, data.stages[0].segments[1].forward_s);
    EXPECT_DOUBLE_EQ(set->tp_seconds_per_layer, 4 * tp);
    EXPECT_LT(layer.forward_s - 2 * tp, one.stages[0].segments[1].forward_s); // a TP rank's share of the kernels
    EXPECT_GT(layer.forward_s, 2 * tp);
  }
  // Megatron-Core's asynchronous backward: the backward's all-reduces beside the column-parallel GEMMs, of which
  // these small layers cover part; the forward's two still block.
  cs::TrainingParams async = w;
  async.framework.async_tensor_model_parallel_allreduce = true;
  const auto overlapped = cs::transformer_stages(async, *cost, p, cs::testing::stage_shape(async, 4, 1));
  EXPECT_GT(overlapped.tp_seconds_per_layer, 2 * tp);
  EXPECT_LT(overlapped.tp_seconds_per_layer, 4 * tp);
  // The built data-parallel graph holds no tensor-parallel transfers: they are in the passes.
  const auto built = cs::testing::build_transformer_training(w, *cost, 4, 1, "1f1b", p);
  for (const auto& t : built.training.graph.tasks())
    if (t.kind == cs::TaskKind::TRANSFER) {
      EXPECT_NE(built.training.graph.names()[t.labels.phase], "tp");
    }
  EXPECT_EQ(built.training.ranks, 8);
  EXPECT_EQ(built.training.tensor_parallel, 2);
}

TEST(Backends, GraphsWithThousandsOfSendersAgreeThroughInboxes)
{
  // 4,600 sending streams make the simgrid backend deliver through per-host inboxes (a mailbox with a permanent
  // receiver) instead of sendto; host 0 receives more than 512 of them, so its receiver drains a long queue.
  // The transfers form one chain, so every link carries one flow at a time and both backends must agree exactly.
  auto p = platform(64, 8, 8);
  cs::TaskGraph g;
  const int hosts = 64 * 8;
  int previous = -1, to_host0 = 0;
  for (int i = 0; i < 4600; ++i) {
    const int src = i % hosts;
    int dst = (i % 3 == 0) ? 0 : (src * 7 + 3 + i / hosts) % hosts;
    if (dst == src)
      dst = (src + 1) % hosts;
    to_host0 += dst == 0;
    const int stream = g.add_stream(src, "s" + std::to_string(i / hosts));
    int t = g.add_transfer(stream, src, dst, 1e5 * (1 + i % 5), "x", {});
    if (previous >= 0)
      g.add_dependency(previous, t);
    previous = t;
  }
  ASSERT_GT(to_host0, 512);
  g.finalize();
  const auto analytical = cs::run_analytical(g, p);
  const auto simgrid = simgrid_timeline(g, p);
  ASSERT_EQ(simgrid.end.size(), analytical.end.size());
  for (std::size_t i = 0; i < analytical.end.size(); ++i)
    ASSERT_LT(relative(simgrid.end[i], analytical.end[i]), 1e-9) << i;
}

TEST(Backends, AnInboxDoesNotHoldAShortTransferBehindALongOnePutBeforeIt)
{
  // An inbox's receiver takes finished transfers in the order they were put. A transfer's end must not depend on
  // that: host 1 sends 1 GB to host 9 at time 0, host 2 sends 1 MB to host 9 just after (on another node, through
  // its own NIC), and the short one ends at latency + bytes / NIC long before the long one. 4,096 other streams
  // (each one small transfer between two other hosts) make the graph take the inbox path.
  auto p = platform(64, 8, 8);
  cs::TaskGraph g;
  const int long_one = g.add_transfer(g.add_stream(8, "long"), 8, 9, 1e9, "x", {});
  const int wait = g.add_delay(g.add_stream(16, "short"), 1e-9, "x", {});
  const int short_one = g.add_transfer(g.task(wait).stream, 16, 9, 1e6, "x", {});
  g.add_dependency(wait, short_one);
  for (int i = 0; i < 4096; ++i) {
    const int src = 24 + i % 400, dst = 24 + (i * 13 + 7) % 400;
    g.add_transfer(g.add_stream(src, "bulk" + std::to_string(i)), src, dst == src ? src + 1 : dst, 1e3, "x", {});
  }
  g.finalize();
  const auto analytical = cs::run_analytical(g, p);
  const auto simgrid = simgrid_timeline(g, p);
  EXPECT_LT(simgrid.end[short_one], simgrid.end[long_one] / 100);
  EXPECT_LT(relative(simgrid.end[short_one], analytical.end[short_one]), 1e-6);
  EXPECT_LT(relative(simgrid.end[long_one], analytical.end[long_one]), 1e-6);
}

TEST(Backends, FabricLinksThatCannotBindAreLeftOutWithoutChangingAnyTime)
{
  // 8 nodes x 8 GPUs x 8 NICs on a 1:1 two-level fat-tree: 4 nodes (32 NICs) per leaf, so a leaf's uplink carries
  // at most what its 32 NICs send and never holds a flow back. SimGrid's routes leave it out (its latency moved to a
  // link of the source's own), and every GPU of leaf 0 sending across at once still takes latency + bytes / NIC.
  auto p = platform(8, 8, 8);
  const auto never = cs::links_that_never_bind(p, {});
  std::map<std::string, int> tiers;
  for (std::size_t k = 0; k < never.size(); ++k)
    if (never[k])
      ++tiers[p.topology.links()[k / 2].tier];
  EXPECT_EQ(tiers, (std::map<std::string, int>{{"leaf-uplink", 4}})); // both directions: two leaves feed 32 NICs each
  auto across = [](const cs::PlatformSpec& spec) {
    cs::TaskGraph g;
    for (int h = 0; h < 32; ++h)
      g.add_transfer(g.add_stream(h, "comm"), h, 32 + h, 1e8, "x", {});
    g.finalize();
    return g;
  };
  const auto g = across(p);
  const auto analytical = cs::run_analytical(g, p);
  const auto simgrid = simgrid_timeline(g, p);
  for (std::size_t i = 0; i < analytical.end.size(); ++i)
    ASSERT_LT(relative(simgrid.end[i], analytical.end[i]), 1e-9) << i;
  // 2:1 oversubscribed, the uplink binds: it stays on the routes and the 32 flows share it, twice as slow.
  cs::ClusterParams c;
  c.nodes = 8;
  c.gpus_per_node = 8;
  c.network.nics_per_node = 8;
  c.network.latency = cs::Seconds{1e-6};
  c.network.levels = {cs::FabricLevel{2.0, 0, cs::Seconds{-1}}, cs::FabricLevel{1.0, 0, cs::Seconds{-1}}};
  const auto over = cs::build_platform_spec(c, h100());
  const auto bind = cs::links_that_never_bind(over, {});
  EXPECT_EQ(std::count(bind.begin(), bind.end(), 1), 0);
  const double latency = over.topology.route_latency(0, 32);
  const double slow = simgrid_timeline(across(over), over).makespan - latency;
  EXPECT_NEAR(slow / (analytical.end[0] - p.topology.route_latency(0, 32)), 2.0, 1e-6);
}

TEST(Backends, DelaysHoldingLinkSharesMoveInWhatTheLinksLeaveAndTransfersToo)
{
  // Closed-form all-to-alls hold shares of the links between switches (TaskGraph::set_link_shares). On the analytical
  // backend one that does not fit beside another runs in what the links leave, first come first served, and a
  // transfer moves in what they leave; SimGrid runs them as delays.
  auto p = platform(2, 2, 1);
  const int nic = 2 * p.topology.route(0, 2).front().link; // node0/nic0, up
  auto graph = [&](double first, double second, bool transfer) {
    cs::TaskGraph g;
    const int a = g.add_delay(g.add_stream(0, "a2a"), 1.0, "all-to-all-v/closed-form", {});
    g.set_link_shares(a, {{nic, first}});
    const int b = g.add_delay(g.add_stream(1, "a2a"), 0.5, "all-to-all-v/closed-form", {});
    g.set_link_shares(b, {{nic, second}});
    if (transfer)
      g.add_transfer(g.add_stream(1, "comm"), 1, 3, 4e10, "send", {});
    g.finalize();
    return g;
  };
  const auto apart = cs::run_analytical(graph(0.4, 0.5, false), p);
  EXPECT_EQ(apart.start[1], 0.0); // 0.4 and 0.5 fit together
  EXPECT_EQ(apart.makespan, 1.0);
  // 0.7 and 0.5 do not: the second moves at 0.3 / 0.5 of its pace beside the first, 0.5 s of work in 0.5 / 0.6 s.
  // Waiting for the first to end would have taken until 1.5 s; fair sharing would end both at 1.1 s.
  const auto slowed = cs::run_analytical(graph(0.7, 0.5, false), p);
  EXPECT_EQ(slowed.start[1], 0.0);
  EXPECT_NEAR(slowed.end[1], 0.5 / 0.6, 1e-12);
  EXPECT_NEAR(slowed.end[0], 1.0, 1e-12); // the first keeps its pace
  // One that fills the link leaves nothing: the second does its work after it.
  const auto filled = cs::run_analytical(graph(1.0, 0.5, false), p);
  EXPECT_NEAR(filled.start[1], 1.0, 1e-12);
  EXPECT_NEAR(filled.makespan, 1.5, 1e-12);
  // A transfer across the NIC moves in what the two leave: a tenth of its rate for 0.5 s, 0.6 of it for 0.5 s, then
  // all of it (it waited for the whole 1 s before, as if the shares were transfers).
  const auto sent = cs::run_analytical(graph(0.4, 0.5, true), p);
  const auto& links = p.topology.links();
  double rate = std::numeric_limits<double>::infinity(), latency = 0;
  for (const auto& use : p.topology.route(1, 3)) {
    rate = std::min(rate, links[use.link].bandwidth);
    latency += links[use.link].latency;
  }
  ASSERT_EQ(links[nic / 2].bandwidth, rate); // the NIC is the bottleneck
  const double moved_by_one = rate * (0.1 * (0.5 - latency) + 0.6 * 0.5);
  ASSERT_LT(moved_by_one, 4e10); // some is left for after 1 s
  EXPECT_EQ(sent.start[2], 0.0);
  EXPECT_NEAR(sent.end[2], 1.0 + (4e10 - moved_by_one) / rate, 1e-9);
  EXPECT_NEAR(simgrid_timeline(graph(0.7, 0.5, true), p).start[1], 0.0, 1e-12);
  // Background load on the NIC scales what the shares leave: half the link left by the background, 0.6 of that by
  // the shares for the first 0.5 s (the first delay alone holds 0.4 of it), then half of the link.
  auto loaded = platform(2, 2, 1); // the same links, numbered alike
  loaded.background[nic / 2].points = {{0.0, 0.5}};
  const auto both = cs::run_analytical(graph(0.4, 0.5, true), loaded);
  const double moved_first = rate * 0.5 * 0.1 * (0.5 - latency), moved_second = rate * 0.5 * 0.6 * 0.5;
  ASSERT_LT(moved_first + moved_second, 4e10);
  EXPECT_NEAR(both.end[2], 1.0 + (4e10 - moved_first - moved_second) / (0.5 * rate), 1e-9);
  cs::TaskGraph g;
  const int compute = g.add_compute(g.add_stream(0, "compute"), 1.0, "gemm", "given", {});
  EXPECT_THROW(g.set_link_shares(compute, {{nic, 0.5}}), std::invalid_argument);
}
