// The nccl-tests-like sweep: how its sizes are priced on the analytical backend, and that pricing leaves the
// counted traffic alone.
#include "sim/exec/executor.hpp"
#include "workloads/collective/collective_sweep.hpp"

#include <gtest/gtest.h>

namespace {

cs::PlatformSpec platform(const char* device, int nodes)
{
  cs::ClusterParams c;
  c.device = device;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  return cs::build_platform_spec(c, *cs::DeviceCatalog::builtin().find(device));
}

std::vector<double> size_times(const cs::CollectiveSweep& sweep, const cs::PlatformSpec& p)
{
  const cs::Timeline tl = cs::run_analytical(sweep.graph, p);
  std::vector<double> out;
  for (std::size_t i = 0; i < sweep.sizes.size(); ++i)
    out.push_back(tl.end[sweep.end_marker[i]] - (sweep.start_marker[i] < 0 ? 0.0 : tl.end[sweep.start_marker[i]]));
  return out;
}

double transfer_bytes(const cs::CollectiveSweep& sweep)
{
  double sum = 0;
  for (const cs::TaskGraph* g : {&sweep.graph, &sweep.expanded})
    for (const auto& t : g->tasks())
      sum += t.kind == cs::TaskKind::TRANSFER ? t.bytes : 0.0;
  return sum;
}

} // namespace

TEST(CollectiveSweep, ClosedFormPricesEverySizeButTheTreeByItsFormula)
{
  // One node: the tuner runs rings (NCCL's tree there is a chain), whose form is their flows' time.
  cs::CollectiveParams params;
  params.min_bytes.value = 32 * 1024;
  params.max_bytes.value = 1 << 30;
  const auto one = platform("a100-sxm4-80gb", 1);
  const auto flows = cs::build_collective_sweep(params, one, 8, cs::SweepPricing::FLOWS);
  const auto exact = cs::build_collective_sweep(params, one, 8, cs::SweepPricing::CLOSED_FORM_WHERE_EXACT);
  const auto forced = cs::build_collective_sweep(params, one, 8, cs::SweepPricing::CLOSED_FORM);
  EXPECT_EQ(flows.closed_form_sizes, 0);
  EXPECT_EQ(forced.closed_form_sizes, static_cast<int>(forced.sizes.size()));
  EXPECT_EQ(exact.closed_form_sizes, static_cast<int>(exact.sizes.size()));
  const auto t_flows = size_times(flows, one), t_exact = size_times(exact, one), t_forced = size_times(forced, one);
  for (std::size_t i = 0; i < exact.sizes.size(); ++i) {
    EXPECT_DOUBLE_EQ(t_forced[i], exact.choices[i].seconds) << exact.sizes[i];
    EXPECT_DOUBLE_EQ(t_exact[i], exact.choices[i].seconds) << exact.sizes[i];
    EXPECT_NEAR(t_exact[i] / t_flows[i], 1.0, 1e-6) << exact.sizes[i]; // the ring's form is its flows' time
  }
  // Pricing moves no bytes: the counted transfers are the same under every pricing.
  EXPECT_NEAR(transfer_bytes(exact) / transfer_bytes(flows), 1.0, 1e-12);
  EXPECT_NEAR(transfer_bytes(forced) / transfer_bytes(flows), 1.0, 1e-12);
  // Two nodes: NCCL's node-level tree takes the small and mid sizes and keeps its flows under `auto`.
  const auto two = platform("a100-sxm4-80gb", 2);
  const auto flows2 = cs::build_collective_sweep(params, two, 16, cs::SweepPricing::FLOWS);
  const auto exact2 = cs::build_collective_sweep(params, two, 16, cs::SweepPricing::CLOSED_FORM_WHERE_EXACT);
  const auto f2 = size_times(flows2, two), e2 = size_times(exact2, two);
  int trees = 0;
  for (std::size_t i = 0; i < exact2.sizes.size(); ++i)
    if (exact2.choices[i].algorithm == "tree") {
      ++trees;
      EXPECT_DOUBLE_EQ(e2[i], f2[i]) << exact2.sizes[i];
    }
  EXPECT_GT(trees, 0);
  EXPECT_EQ(exact2.closed_form_sizes, static_cast<int>(exact2.sizes.size()) - trees);
}

TEST(CollectiveSweep, ClosedFormsFitOnlyAnIdleNonBlockingFabric)
{
  cs::NetworkParams n;
  EXPECT_TRUE(cs::closed_forms_fit(n));
  n.levels[1].oversubscription = 2;
  EXPECT_FALSE(cs::closed_forms_fit(n));
  n = cs::NetworkParams{};
  n.background.push_back(cs::BackgroundParams{});
  EXPECT_FALSE(cs::closed_forms_fit(n));
  n = cs::NetworkParams{};
  n.kind = cs::NetworkKind::RAIL_OPTIMIZED;
  EXPECT_FALSE(cs::closed_forms_fit(n));
  // ECMP collisions are not in the forms.
  n = cs::NetworkParams{};
  n.routing = cs::FabricRouting::ECMP;
  EXPECT_FALSE(cs::closed_forms_fit(n));
}

// A size must not start before the previous one ends on every rank. A tree's leaves send their first chunk at
// step 1; they used to wait only for their stream, so the next size's leaves started early and, list-scheduled,
// took link room from the size still running (64 KiB took 102 us instead of 36 us on 8 A100).
TEST(CollectiveSweep, EverySizeWaitsForThePreviousOne)
{
  cs::CollectiveParams params;
  params.algorithm = "tree";
  params.min_bytes.value = 32 * 1024;
  params.max_bytes.value = 4 << 20;
  const auto p = platform("a100-sxm4-80gb", 1);
  const auto sweep = cs::build_collective_sweep(params, p, 8, cs::SweepPricing::FLOWS);
  const cs::Timeline tl = cs::run_analytical(sweep.graph, p);
  for (std::size_t t = 0; t < sweep.graph.size(); ++t) {
    const int size = sweep.graph.task(static_cast<int>(t)).labels.iteration;
    if (size > 0 && sweep.graph.task(static_cast<int>(t)).kind == cs::TaskKind::TRANSFER) {
      EXPECT_GE(tl.start[t], tl.end[sweep.end_marker[size - 1]] - 1e-15) << "task " << t << " of size " << size;
    }
  }
  // Alone or after smaller sizes, 64 KiB takes the same time.
  params.min_bytes.value = params.max_bytes.value = 64 * 1024;
  const auto alone = cs::build_collective_sweep(params, p, 8, cs::SweepPricing::FLOWS);
  EXPECT_NEAR(size_times(alone, p)[0] / size_times(sweep, p)[1], 1.0, 1e-9);
}
