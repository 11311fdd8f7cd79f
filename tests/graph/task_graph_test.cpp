#include "core/critical_path.hpp"
#include "models/collectives/lowering.hpp"
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

TEST(TaskGraph, ReorderedStreamTailRunsInItsNewOrder)
{
  // x(2) then y(3) emitted on one stream, z(1) on another feeding y; reordered to y, x: y starts once z is done.
  cs::TaskGraph g;
  int s = g.add_stream(0, "compute"), other = g.add_stream(1, "compute");
  int x = g.add_compute(s, 2, "x", "fixed", {});
  int z = g.add_compute(other, 1, "z", "fixed", {});
  int y = g.add_compute(s, 3, "y", "fixed", {});
  g.add_dependency(z, y);
  EXPECT_TRUE(g.stream_consistent_order().empty());                      // nothing reordered: the ids are the order
  EXPECT_THROW(g.reorder_stream_tail(s, {x, z}), std::invalid_argument); // z is not on the stream
  EXPECT_THROW(g.reorder_stream_tail(s, {y, y}), std::invalid_argument);
  EXPECT_THROW(g.reorder_stream_tail(s, {x, y, z}), std::invalid_argument); // longer than the stream
  g.reorder_stream_tail(s, {y, x});
  EXPECT_EQ(g.stream_tasks(s), (std::vector<int>{y, x}));
  // Each stream's tasks fill its own id slots: x's slot (0) takes y, y's slot (2) takes x.
  EXPECT_EQ(g.stream_consistent_order(), (std::vector<int>{y, z, x}));
  g.finalize();
  auto tl = cs::run_analytical(g, one_node());
  EXPECT_DOUBLE_EQ(tl.start[y], 1.0);
  EXPECT_DOUBLE_EQ(tl.start[x], 4.0);
  EXPECT_DOUBLE_EQ(tl.makespan, 6.0);
  EXPECT_THROW(g.reorder_stream_tail(s, {x, y}), std::logic_error); // finalized
}

TEST(TaskGraph, LoweringKeepsAReorderedStreamOrder)
{
  // A compute stream reordered around an all-to-all member: the lowered graph must keep the new order (it copies
  // tasks by id otherwise, which would put x back first).
  cs::TaskGraph g;
  int s0 = g.add_stream(0, "compute"), s1 = g.add_stream(1, "compute");
  int x = g.add_compute(s0, 2, "x", "fixed", {});
  int y = g.add_compute(s0, 1, "y", "fixed", {});
  int w = g.add_compute(s1, 1, "w", "fixed", {});
  cs::CollectiveSpec spec;
  spec.kind = "all-to-all";
  spec.hosts = {0, 1};
  spec.bytes = 1e6;
  const auto members = g.add_collective(spec, {g.add_stream(0, "comm"), g.add_stream(1, "comm")}, {y, w});
  g.add_dependency(members[0], x); // x needs the exchange that y starts
  g.reorder_stream_tail(s0, {y, x});
  auto lowered = cs::lower_collectives(g, one_node(), cs::CollectivePricing{});
  const int ly = lowered.task_map[y], lx = lowered.task_map[x];
  ASSERT_GE(ly, 0);
  ASSERT_GE(lx, 0);
  EXPECT_EQ(lowered.graph.stream_tasks(s0), (std::vector<int>{ly, lx}));
  auto tl = cs::run_analytical(lowered.graph, one_node());
  EXPECT_GT(tl.start[lx], tl.end[ly]);
}

TEST(TaskGraph, ACopiedTaskKeepsItsNamesAndStreamAndRefusesWhatTheGraphLacks)
{
  // add_copy takes another graph's task as it is: its name and model indices mean the same once the copy interned
  // the original's names in order, and it joins its stream's order like any task.
  cs::TaskGraph from;
  const int s = from.add_stream(0, "compute");
  const int a = from.add_compute(s, 2, "gemm", "roofline", {});
  const int b = from.add_delay(s, 1, "wait", {});
  cs::TaskGraph to;
  to.add_stream(0, "compute");
  for (const auto& name : from.names())
    to.intern(name);
  const int ca = to.add_copy(from.task(a)), cb = to.add_copy(from.task(b));
  EXPECT_EQ(to.names()[to.task(ca).name], "gemm");
  EXPECT_EQ(to.names()[to.task(ca).model], "roofline");
  EXPECT_EQ(to.task(cb).kind, cs::TaskKind::DELAY);
  EXPECT_EQ(to.stream_tasks(0), (std::vector<int>{ca, cb}));
  cs::Task collective = from.task(a);
  collective.kind = cs::TaskKind::COLLECTIVE;
  EXPECT_THROW(to.add_copy(collective), std::invalid_argument);
  cs::Task elsewhere = from.task(a);
  elsewhere.stream = 5;
  EXPECT_THROW(to.add_copy(elsewhere), std::invalid_argument);
  cs::Task unnamed = from.task(a);
  unnamed.name = static_cast<std::uint16_t>(to.names().size());
  EXPECT_THROW(to.add_copy(unnamed), std::invalid_argument);
}
