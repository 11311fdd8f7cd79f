#include "core/critical_path.hpp"
#include "sim/exec/executor.hpp"

#include <gtest/gtest.h>

namespace {
cs::PlatformSpec one_node()
{
  cs::ClusterParams c;
  c.nodes = 1;
  c.gpus_per_node = 4;
  c.network.nics_per_node = 4;
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find("h100-sxm5"));
}
} // namespace

TEST(TaskGraph, CriticalPathOfAHandBuiltDag)
{
  // a(1) -> b(5) -> d(1); a -> c(2) -> d; e(0.5) independent on another device. Critical: a, b, d = 7 s.
  cs::TaskGraph g;
  int s0 = g.add_stream(0, "compute"), s1 = g.add_stream(1, "compute"), s2 = g.add_stream(2, "compute");
  int a = g.add_compute(s0, 1, "a", "fixed", {});
  int b = g.add_compute(s1, 5, "b", "fixed", {});
  int c = g.add_compute(s2, 2, "c", "fixed", {});
  int d = g.add_compute(s0, 1, "d", "fixed", {});
  int e = g.add_compute(g.add_stream(3, "compute"), 0.5, "e", "fixed", {});
  g.add_dependency(a, b);
  g.add_dependency(a, c);
  g.add_dependency(b, d);
  g.add_dependency(c, d);
  g.finalize();
  auto tl = cs::run_analytical(g, one_node());
  EXPECT_DOUBLE_EQ(tl.makespan, 7.0);
  EXPECT_DOUBLE_EQ(tl.start[d], 6.0);
  EXPECT_DOUBLE_EQ(tl.end[e], 0.5);
  EXPECT_EQ(cs::critical_path(g, tl), (std::vector<int>{a, b, d}));
}

TEST(TaskGraph, StreamOrderSerialisesTasks)
{
  cs::TaskGraph g;
  int s = g.add_stream(0, "compute");
  int x = g.add_compute(s, 2, "x", "fixed", {});
  int y = g.add_compute(s, 3, "y", "fixed", {});
  g.finalize();
  auto tl = cs::run_analytical(g, one_node());
  EXPECT_DOUBLE_EQ(tl.start[y], tl.end[x]);
  EXPECT_DOUBLE_EQ(tl.makespan, 5.0);
}

TEST(TaskGraph, CycleAgainstStreamOrderIsRejected)
{
  cs::TaskGraph g;
  int s = g.add_stream(0, "compute");
  int x = g.add_compute(s, 1, "x", "fixed", {});
  int y = g.add_compute(s, 1, "y", "fixed", {});
  g.add_dependency(y, x); // y runs after x on the stream, so x cannot wait for y
  EXPECT_THROW(g.finalize(), std::logic_error);
  EXPECT_THROW(g.add_dependency(x, x), std::logic_error);
  EXPECT_THROW(g.add_compute(s, -1, "neg", "fixed", {}), std::invalid_argument);
}
