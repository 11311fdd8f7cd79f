// The partial-reduce controller's rules (policies.md §4): release at P or at the deadline, pairs above 8, union-find
// merges every ssp_bound x N updates, global syncs, leaving workers; and its invariants under random arrivals.
#include "policies/sync_scheme/partial_reduce_controller.hpp"

#include <gtest/gtest.h>
#include <random>

using cs::PartialReduceController;
using cs::PartialReduceParams;

namespace {
PartialReduceParams params(int p, int ssp_bound = 0, int sync_every = 0)
{
  PartialReduceParams out;
  out.group_size = p;
  out.ssp_bound = ssp_bound;
  out.sync_every = sync_every;
  return out;
}
} // namespace

TEST(PartialReduceController, ReleasesAGroupOncePWorkersAreReady)
{
  PartialReduceController c(4, params(2));
  auto first = c.arrive(3, 0.0, 1e-3);
  EXPECT_TRUE(first.groups.empty());
  EXPECT_DOUBLE_EQ(first.deadline, 1e-3); // the first arrival sets the round's deadline
  auto second = c.arrive(1, 0.0005, 5e-3);
  ASSERT_EQ(second.groups.size(), 1u);
  EXPECT_EQ(second.groups[0], (std::vector<int>{1, 3})); // sorted
  EXPECT_LT(second.deadline, 0);
}

TEST(PartialReduceController, TheDeadlineReleasesWhoeverIsReadyAndStaleDeadlinesDoNothing)
{
  PartialReduceController c(4, params(3));
  auto a = c.arrive(0, 0.0, 1e-3);
  c.arrive(2, 0.0001, 1e-3);
  auto released = c.deadline(a.epoch);
  ASSERT_EQ(released.groups.size(), 1u);
  EXPECT_EQ(released.groups[0], (std::vector<int>{0, 2}));
  EXPECT_TRUE(c.deadline(a.epoch).groups.empty()); // that round is gone
  auto b = c.arrive(1, 0.002, 1e-3);
  c.arrive(0, 0.002, 1e-3);
  c.arrive(3, 0.002, 1e-3); // released by size
  EXPECT_TRUE(c.deadline(b.epoch).groups.empty());
}

TEST(PartialReduceController, AboveEightWorkersTheGroupRunsAsConsecutivePairs)
{
  PartialReduceController c(20, params(10));
  cs::PartialReduceRelease last;
  for (int w : {9, 0, 7, 1, 8, 2, 6, 3, 5, 4})
    last = c.arrive(w, 0, 1e-3);
  ASSERT_EQ(last.groups.size(), 5u);
  for (int g = 0; g < 5; ++g)
    EXPECT_EQ(last.groups[g], (std::vector<int>{2 * g, 2 * g + 1}));
  // An odd count: the odd one out joins the last pair instead of reducing alone.
  PartialReduceController d(20, params(10));
  auto open = d.arrive(11, 0, 1e-3);
  d.arrive(12, 0, 1e-3);
  d.arrive(13, 0, 1e-3);
  d.arrive(14, 0, 1e-3);
  d.arrive(15, 0, 1e-3);
  auto five = d.deadline(open.epoch);
  ASSERT_EQ(five.groups.size(), 2u);
  EXPECT_EQ(five.groups[0], (std::vector<int>{11, 12}));
  EXPECT_EQ(five.groups[1], (std::vector<int>{13, 14, 15}));
}

TEST(PartialReduceController, AfterSspBoundTimesNUpdatesTheNextGroupConnectsEveryWorker)
{
  PartialReduceController c(4, params(2, 1));
  c.arrive(0, 0, 1e-3);
  c.arrive(1, 0, 1e-3); // {0,1}
  c.arrive(2, 0, 1e-3);
  c.arrive(3, 0, 1e-3); // {2,3}: 4 updates = ssp_bound x N
  auto open = c.arrive(0, 1, 1e-3);
  EXPECT_TRUE(c.arrive(1, 1, 1e-3).groups.empty());   // {0,1} is one component: it must wait for the other
  EXPECT_TRUE(c.deadline(open.epoch).groups.empty()); // and the deadline does not release it
  auto merged = c.arrive(3, 1, 1e-3);
  ASSERT_EQ(merged.groups.size(), 1u);
  EXPECT_EQ(merged.groups[0], (std::vector<int>{0, 1, 3}));
  EXPECT_TRUE(merged.merge);
}

TEST(PartialReduceController, AnEpochEndsInAGlobalSyncOfEveryWorker)
{
  PartialReduceController c(3, params(2, 0, 1));
  c.arrive(0, 0, 1e-3);
  c.arrive(1, 0, 1e-3);
  auto open = c.arrive(2, 0, 1e-3);
  c.deadline(open.epoch); // {2} alone: 3 updates = one epoch
  c.arrive(2, 1, 1e-3);
  EXPECT_TRUE(c.arrive(0, 1, 1e-3).groups.empty()); // two of three: a global sync waits for all
  auto sync = c.arrive(1, 1, 1e-3);
  ASSERT_EQ(sync.groups.size(), 1u);
  EXPECT_TRUE(sync.global);
  EXPECT_EQ(sync.groups[0].size(), 3u);
}

TEST(PartialReduceController, AWorkerThatLeavesNoLongerHoldsARoundOpen)
{
  PartialReduceController c(3, params(3));
  c.arrive(0, 0, 1e-3);
  c.arrive(1, 0, 1e-3);
  auto released = c.leave(2);
  ASSERT_EQ(released.groups.size(), 1u);
  EXPECT_EQ(released.groups[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(c.active(), 2);
}

TEST(PartialReduceController, WaitsAdaptAsPublished)
{
  EXPECT_DOUBLE_EQ(PartialReduceController::next_wait(1e-3, 1), 2e-3);
  EXPECT_DOUBLE_EQ(PartialReduceController::next_wait(8e-3, 1), 10e-3);
  EXPECT_DOUBLE_EQ(PartialReduceController::next_wait(1e-3, 3), 0.9e-3);
  EXPECT_DOUBLE_EQ(PartialReduceController::next_wait(1.05e-5, 2), 1e-5);
}

// Random arrivals and deadlines: no one-worker group while others were ready, and merges at most about
// ssp_bound x N updates apart.
TEST(PartialReduceController, InvariantsHoldUnderRandomArrivals)
{
  const int n = 12, bound = 2;
  for (int p : {3, 10}) {
    PartialReduceController c(n, params(p, bound));
    std::mt19937 rng(7);
    std::vector<int> waiting;
    std::vector<bool> is_waiting(n, false);
    long long epoch = 0, since_merge = 0;
    int merges = 0;
    for (int event = 0; event < 20000; ++event) {
      std::vector<int> idle;
      for (int w = 0; w < n; ++w)
        if (!is_waiting[w])
          idle.push_back(w);
      cs::PartialReduceRelease r;
      int ready = n - static_cast<int>(idle.size()); // waiting, with this event's arrival
      if (!idle.empty() && rng() % 4 != 0) {
        const int w = idle[rng() % idle.size()];
        is_waiting[w] = true;
        ++ready;
        r = c.arrive(w, event, 1);
        if (r.deadline >= 0)
          epoch = r.epoch;
      } else {
        r = c.deadline(epoch);
      }
      for (const auto& g : r.groups) {
        if (g.size() == 1 && !r.merge) {
          EXPECT_EQ(ready, 1) << "a lone group while others were ready";
        }
        for (int w : g)
          is_waiting[w] = false;
        since_merge += static_cast<long long>(g.size());
      }
      if (r.merge) {
        EXPECT_LE(since_merge, (bound + 2) * n);
        since_merge = 0;
        ++merges;
      }
    }
    EXPECT_GT(merges, 10) << "P = " << p;
  }
}
