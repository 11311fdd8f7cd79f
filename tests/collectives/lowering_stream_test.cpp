#include "models/collectives/lowering.hpp"
#include "sim/exec/executor.hpp"
#include "tests/test_support.hpp"

#include <algorithm>
#include <gtest/gtest.h>

TEST(Lowering, AnExpandedCollectiveHoldsItsStreamUntilItCompletes)
{
  // Two ring all-reduces over 16 GPUs on two machines, one after the other on each rank's "comm" stream, the first
  // started late on rank 0. The ring expands over eight channels (comm, comm1, ...), and a rank's channel-0 sends of
  // the first end before its other channels and its receives do. NCCL runs the second kernel once the first has
  // completed on the rank, so none of the second's transfers may start before the first's last transfer ends.
  const auto p = cs::testing::h100_nodes(2);
  cs::TaskGraph g;
  std::vector<int> streams, computed;
  for (int r = 0; r < 16; ++r) {
    streams.push_back(g.add_stream(r, "comm"));
    computed.push_back(g.add_compute(g.add_stream(r, "compute"), r == 0 ? 2e-3 : 1e-4, "backward", "fixed", {}));
  }
  cs::CollectiveSpec first;
  first.kind = "all-reduce";
  first.bytes = 64e6;
  for (int r = 0; r < 16; ++r)
    first.hosts.push_back(r);
  first.labels.bucket = 0;
  cs::CollectiveSpec second = first;
  second.bytes = 8e6;
  second.labels.bucket = 1;
  g.add_collective(first, streams, computed);
  g.add_collective(second, streams, computed);
  const auto lowered = cs::lower_collectives(g, p, cs::CollectivePricing::FLOWS);
  const cs::TaskGraph& out = lowered.graph;
  const auto tl = cs::run_analytical(out, p);
  // The transfers of each collective, told apart by their bucket label.
  double first_end = 0, second_start = 1e9;
  int firsts = 0, seconds = 0;
  for (std::size_t t = 0; t < out.size(); ++t) {
    const cs::Task& task = out.task(static_cast<int>(t));
    if (task.kind != cs::TaskKind::TRANSFER)
      continue;
    if (task.labels.bucket == 0) {
      first_end = std::max(first_end, tl.end[t]);
      ++firsts;
    } else {
      second_start = std::min(second_start, tl.start[t]);
      ++seconds;
    }
  }
  ASSERT_GT(firsts, 16 * 8);
  ASSERT_GT(seconds, 16 * 8);
  EXPECT_GE(second_start, first_end - 1e-12);
}
