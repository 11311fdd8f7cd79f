// The flow-level network of the analytical actor backend: processor sharing per resource, weights, latency,
// bottleneck charging, cancellation and background load, against end times worked out by hand.
#include "sim/runtime/flow_level_network.hpp"

#include <gtest/gtest.h>

#include <map>

namespace {

using cs::FlowLevelNetwork;

// Runs the model to quiescence; returns each flow's end time.
std::map<int, double> run_all(FlowLevelNetwork& net)
{
  std::map<int, double> ended;
  for (int guard = 0; guard < 100000; ++guard) {
    const double t = net.next_event();
    if (t >= FlowLevelNetwork::kNever)
      break;
    for (int id : net.advance(t))
      ended[id] = t;
  }
  return ended;
}

TEST(FlowLevelNetwork, EqualFlowsShareOneResource)
{
  FlowLevelNetwork net;
  const int r = net.add_resource(100);
  const int a = net.start(0, {r}, 100, 0, 1);
  const int b = net.start(0, {r}, 300, 0, 1);
  const auto end = run_all(net);
  // Both at 50 B/s until a ends at 2 s; b has 200 B left, alone at 100 B/s: 4 s.
  EXPECT_NEAR(end.at(a), 2.0, 1e-9);
  EXPECT_NEAR(end.at(b), 4.0, 1e-9);
  EXPECT_EQ(net.in_flight(), 0u);
}

TEST(FlowLevelNetwork, WeightsSplitCapacityInProportion)
{
  FlowLevelNetwork net;
  const int r = net.add_resource(100);
  const int light = net.start(0, {r}, 100, 0, 1);
  const int heavy = net.start(0, {r}, 300, 0, 3);
  const auto end = run_all(net);
  // 25 and 75 B/s: both end at 4 s.
  EXPECT_NEAR(end.at(light), 4.0, 1e-9);
  EXPECT_NEAR(end.at(heavy), 4.0, 1e-9);
}

TEST(FlowLevelNetwork, LatencyIsPaidBeforeJoining)
{
  FlowLevelNetwork net;
  const int r = net.add_resource(100);
  const int a = net.start(0, {r}, 100, 0, 1);
  const int b = net.start(0, {r}, 100, 0.5, 1);
  const auto end = run_all(net);
  // a alone for 0.5 s (50 B), then both at 50 B/s: a ends at 1.5 s, b has 50 B left at 1.5 s and ends at 2 s.
  EXPECT_NEAR(end.at(a), 1.5, 1e-9);
  EXPECT_NEAR(end.at(b), 2.0, 1e-9);
}

TEST(FlowLevelNetwork, AFlowIsChargedToItsNarrowestResource)
{
  FlowLevelNetwork net;
  const int wide = net.add_resource(1000);
  const int narrow = net.add_resource(10);
  const int f = net.start(0, {wide, narrow}, 100, 0, 1);
  EXPECT_NEAR(run_all(net).at(f), 10.0, 1e-9);
}

TEST(FlowLevelNetwork, LaterFlowsAreChargedWhereTheyShareMost)
{
  // Three fetches into one downlink from three hosts: each uplink holds one flow, the downlink all three.
  FlowLevelNetwork net;
  const int down = net.add_resource(100);
  std::vector<int> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(net.start(0, {net.add_resource(100), down}, 100, 0, 1));
  for (const auto& [id, t] : run_all(net))
    EXPECT_NEAR(t, 3.0, 1e-9) << "flow " << id;
}

TEST(FlowLevelNetwork, AFlowChargedElsewhereWeighsWhatItMovesThere)
{
  // a crosses a 50 B/s resource and a shared 200 B/s one and is charged to the first. Alone, it weighs 50/200 of
  // its weight on the shared one; without refreshes b then gets 200 / 1.25 = 160 B/s there (max-min: 150).
  // Refreshed once b is in, a weighs 50/100 (its share there would be 100), and b gets 200 / 1.5 = 133 B/s.
  for (int refresh : {0, 3}) {
    FlowLevelNetwork net(refresh);
    const int slow = net.add_resource(50);
    const int shared = net.add_resource(200);
    const int a = net.start(0, {slow, shared}, 100, 0, 1);
    const int b = net.start(0, {shared}, 300, 0, 1);
    const auto end = run_all(net);
    EXPECT_NEAR(end.at(a), 2.0, 1e-9);
    const double b_end = refresh == 0 ? 300.0 / 160 : 2 + (300 - 2 * 200 / 1.5) / 200;
    EXPECT_NEAR(end.at(b), b_end, 1e-9) << "refresh " << refresh;
  }
}

TEST(FlowLevelNetwork, CancellingAFlowSpeedsUpTheOthers)
{
  FlowLevelNetwork net;
  const int r = net.add_resource(100);
  const int a = net.start(0, {r}, 200, 0, 1);
  const int b = net.start(0, {r}, 1000, 0, 1);
  EXPECT_TRUE(net.advance(1.0).empty());
  net.cancel(1.0, b); // a has 150 B left, now alone
  const auto end = run_all(net);
  EXPECT_NEAR(end.at(a), 2.5, 1e-9);
  EXPECT_EQ(end.count(b), 0u);
  EXPECT_EQ(net.in_flight(), 0u);
}

TEST(FlowLevelNetwork, CancellingAFlowStillInItsLatencyEndsNothing)
{
  FlowLevelNetwork net;
  const int r = net.add_resource(100);
  const int a = net.start(0, {r}, 100, 5, 1);
  net.cancel(1, a);
  EXPECT_TRUE(run_all(net).empty());
  EXPECT_EQ(net.in_flight(), 0u);
}

TEST(FlowLevelNetwork, BackgroundLoadScalesCapacityOverTime)
{
  cs::LinkAvailability half_after_one;
  half_after_one.points = {{0.0, 1.0}, {1.0, 0.5}};
  FlowLevelNetwork net;
  const int r = net.add_resource(100, &half_after_one);
  const int f = net.start(0, {r}, 200, 0, 1);
  // 100 B in the first second, then 50 B/s for the other 100 B.
  EXPECT_NEAR(run_all(net).at(f), 3.0, 1e-9);
}

TEST(FlowLevelNetwork, ACapacityDropMovesTheFlowsCrossingTheResource)
{
  // Charged to the 100 B/s resource at first; at 1 s background load leaves 50 B/s of the other, which becomes the
  // bottleneck: 100 B in the first second, 100 B at 50 B/s after (3 s, not 2 s).
  cs::LinkAvailability quarter_after_one;
  quarter_after_one.points = {{0.0, 1.0}, {1.0, 0.25}};
  FlowLevelNetwork net;
  const int first = net.add_resource(100);
  const int loaded = net.add_resource(200, &quarter_after_one);
  const int f = net.start(0, {first, loaded}, 200, 0, 1);
  EXPECT_NEAR(run_all(net).at(f), 3.0, 1e-9);
}

TEST(FlowLevelNetwork, ARouteWithNoResourceEndsAfterItsLatency)
{
  FlowLevelNetwork net;
  const int f = net.start(2, {}, 1e9, 0.25, 1);
  EXPECT_NEAR(run_all(net).at(f), 2.25, 1e-12);
}

TEST(FlowLevelNetwork, IdsOfEndedFlowsAreReusedWithoutConfusion)
{
  FlowLevelNetwork net;
  const int r = net.add_resource(10);
  const int a = net.start(0, {r}, 10, 0, 1);
  ASSERT_EQ(net.advance(1.0), std::vector<int>{a});
  const int b = net.start(1.0, {r}, 20, 0, 1);
  EXPECT_EQ(b, a); // the slot is recycled; its old queue entries must not end the new flow early
  EXPECT_NEAR(run_all(net).at(b), 3.0, 1e-9);
}

} // namespace
