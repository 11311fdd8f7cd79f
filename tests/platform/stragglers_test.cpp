// The straggler model: seeded per-step slowdowns (their rate and distribution), slow devices and nodes, recorded step
// times replayed, and step-time traces refused at the malformed value's row and column.
#include "base/input_error.hpp"
#include "platform/stragglers.hpp"
#include "tests/test_support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace fs = std::filesystem;
using cs::StragglerModel;
using cs::StragglerParams;

namespace {

using cs::testing::write_temp;
StragglerParams random_params(double p, double seconds, const std::string& distribution)
{
  StragglerParams s;
  s.random.probability = p;
  s.random.duration = cs::Seconds{seconds};
  s.random.distribution = distribution == "exponential" ? cs::SlowdownDistribution::EXPONENTIAL
                          : distribution == "uniform"   ? cs::SlowdownDistribution::UNIFORM
                                                        : cs::SlowdownDistribution::FIXED;
  return s;
}

void expect_error_at(const std::string& text, int line, int column, const std::string& words)
{
  const fs::path p = write_temp("bad.csv", text);
  try {
    cs::read_step_time_trace(p.string());
    ADD_FAILURE() << "accepted: " << text;
  } catch (const cs::InputError& e) {
    EXPECT_EQ(e.line(), line) << e.where();
    EXPECT_EQ(e.column(), column) << e.where();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.where();
  }
  fs::remove(p);
}
} // namespace

TEST(Stragglers, SlowdownsAreSeededPerDeviceAndStepAtTheGivenRate)
{
  const StragglerModel a(random_params(0.1, 0.3, "fixed"), 16, 8, 1), b(random_params(0.1, 0.3, "fixed"), 16, 8, 1),
      c(random_params(0.1, 0.3, "fixed"), 16, 8, 2);
  int hits = 0, differ = 0;
  const int draws = 200000;
  for (int i = 0; i < draws; ++i) {
    const double d = a.delay(i % 16, i / 16);
    EXPECT_EQ(d, b.delay(i % 16, i / 16));
    differ += d != c.delay(i % 16, i / 16);
    if (d > 0) {
      EXPECT_DOUBLE_EQ(d, 0.3);
      ++hits;
    }
  }
  EXPECT_NEAR(double(hits) / draws, 0.1, 0.003);
  EXPECT_GT(differ, draws / 20); // another seed, other slowdowns
}

TEST(Stragglers, ExponentialAndUniformSlowdownsHaveTheGivenMean)
{
  for (const char* dist : {"exponential", "uniform"}) {
    const StragglerModel m(random_params(1.0, 0.2, dist), 4, 4, 3);
    double sum = 0;
    const int draws = 100000;
    for (int i = 0; i < draws; ++i)
      sum += m.delay(i % 4, i);
    EXPECT_NEAR(sum / draws, 0.2, 0.004) << dist;
  }
}

TEST(Stragglers, SlowDevicesAndNodesScaleStepsAndRecordedTimesReplace)
{
  StragglerParams s;
  s.slow.push_back({{3}, {}, 0.25});
  s.slow.push_back({{}, {1}, 0.5}); // node 1: devices 8-15
  cs::StepTimeTrace trace;
  trace.steps[5] = {1.0, 2.0};
  const StragglerModel m(s, 16, 8, 1, trace);
  EXPECT_DOUBLE_EQ(m.speed(0), 1.0);
  EXPECT_DOUBLE_EQ(m.step_seconds(3, 0, 0.1), 0.4);
  EXPECT_DOUBLE_EQ(m.step_seconds(12, 7, 0.1), 0.2);
  EXPECT_DOUBLE_EQ(m.step_seconds(5, 0, 0.1), 1.0);
  EXPECT_DOUBLE_EQ(m.step_seconds(5, 3, 0.1), 2.0); // past its end the record repeats
  EXPECT_EQ(m.slow_devices(), 9);
  EXPECT_TRUE(m.any());
  EXPECT_FALSE(StragglerModel(StragglerParams{}, 8, 8, 1).any());
}

TEST(Stragglers, ASpreadGivesTheExpectedOrderStatisticsPlacedBySeed)
{
  StragglerParams s;
  s.spread = 0.015;
  const int n = 1024;
  const StragglerModel a(s, n, 8, 1), b(s, n, 8, 1), c(s, n, 8, 2);
  std::vector<double> speeds;
  int moved = 0;
  for (int d = 0; d < n; ++d) {
    speeds.push_back(a.speed(d));
    EXPECT_EQ(a.speed(d), b.speed(d));
    moved += a.speed(d) != c.speed(d);
  }
  EXPECT_GT(moved, n / 2); // another seed places the devices elsewhere...
  std::vector<double> other;
  for (int d = 0; d < n; ++d)
    other.push_back(c.speed(d));
  std::sort(speeds.begin(), speeds.end());
  std::sort(other.begin(), other.end());
  EXPECT_EQ(speeds, other); // ...with the same speeds
  double mean = 0;
  for (double v : speeds)
    mean += v / n;
  EXPECT_NEAR(mean, 1.0, 1e-12);
  // The slowest of 1,024 normal draws is about 3.2 standard deviations below the mean (Blom's
  // approximation: z = -3.234).
  EXPECT_NEAR(speeds.front(), 1 - 0.015 * 3.234, 0.015 * 0.002);
  EXPECT_NEAR(speeds[n / 2], 1.0, 0.015 * 0.01);
  EXPECT_TRUE(a.any());
  EXPECT_EQ(a.slow_devices(), 0); // summaries count the `slow` entries, not the spread
}

TEST(Stragglers, ASpreadMultipliesSlowFactorsAndAGroupRunsAtItsSlowestDevice)
{
  StragglerParams s;
  s.slow.push_back({{6}, {}, 0.5});
  const StragglerModel alone(s, 16, 8, 1);
  const StragglerModel tp4 = alone.slowest_in_groups(4);
  for (int d = 0; d < 16; ++d)
    EXPECT_DOUBLE_EQ(tp4.speed(d), d >= 4 && d < 8 ? 0.5 : 1.0) << d; // device 6 holds back its group of 4
  s.spread = 0.02;
  StragglerParams only_spread;
  only_spread.spread = 0.02;
  const StragglerModel both(s, 16, 8, 1), spread_only(only_spread, 16, 8, 1);
  EXPECT_DOUBLE_EQ(both.speed(6), 0.5 * spread_only.speed(6));
  EXPECT_DOUBLE_EQ(both.speed(2), spread_only.speed(2));
  EXPECT_DOUBLE_EQ(both.slowest_in_groups(1).speed(3), both.speed(3));
  // Arbitrary groups (a pipeline stage across replicas): every member takes the slowest; unknown devices are ignored.
  const StragglerModel folded = both.slowest_of({{1, 6, 99}, {2}});
  EXPECT_DOUBLE_EQ(folded.speed(1), std::min(both.speed(1), both.speed(6)));
  EXPECT_DOUBLE_EQ(folded.speed(6), folded.speed(1));
  EXPECT_DOUBLE_EQ(folded.speed(2), both.speed(2));
}

TEST(Stragglers, AGroupSimulatedAsOneDeviceWaitsForItsLongestSlowdown)
{
  // Four groups of two: each member takes its group's longest slowdown before a step, the same draw as its own where
  // it is the longer; devices outside every group keep their own. Without slowdowns nothing is kept per group.
  StragglerParams s;
  s.random = {0.3, cs::Seconds{0.05}, cs::SlowdownDistribution::EXPONENTIAL};
  const StragglerModel alone(s, 10, 8, 3);
  const StragglerModel grouped = alone.slowest_and_latest_of({{0, 1}, {2, 3}, {4, 5}, {6, 7, 42}});
  int raised = 0;
  for (long long step = 0; step < 200; ++step) {
    for (int d = 0; d < 8; ++d) {
      const int other = d ^ 1;
      EXPECT_DOUBLE_EQ(grouped.delay(d, step), std::max(alone.delay(d, step), alone.delay(other, step))) << d;
      raised += grouped.delay(d, step) > alone.delay(d, step);
    }
    EXPECT_DOUBLE_EQ(grouped.delay(8, step), alone.delay(8, step));
  }
  EXPECT_GT(raised, 100); // about 0.3 x 0.7 of 1,600 draws: a member's partner was slowed and it was not
  EXPECT_DOUBLE_EQ(grouped.speed(3), alone.speed(3));
}

TEST(Stragglers, StepTimeTracesAreReadAndMalformedRowsRefusedWhereTheyAre)
{
  const fs::path ok = write_temp("ok.csv", "worker,step,seconds\n0,0,0.5\n1,0,0.25\n0,1,0.75\n");
  const auto trace = cs::read_step_time_trace(ok.string());
  EXPECT_EQ(trace.steps.at(0), (std::vector<double>{0.5, 0.75}));
  EXPECT_EQ(trace.steps.at(1), (std::vector<double>{0.25}));
  fs::remove(ok);
  expect_error_at("worker,step,seconds\n0,0,0.5\n0,0,abc\n", 3, 5, "expected a number for seconds");
  expect_error_at("0,0,0.5\n0,2,0.5\n", 2, 3, "expected step 1");
  expect_error_at("0,0,-1\n", 1, 5, "seconds must be in");
  expect_error_at("0.5,0,1\n", 1, 1, "whole number");
  expect_error_at("0;0;1\n", 1, 1, "expected 'worker,step,seconds'");
  expect_error_at("worker,step,seconds\n", 1, 1, "no rows");
}
