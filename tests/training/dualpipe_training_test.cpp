// DualPipe in the training builder: both copies of a stage reduce their gradients together, from the two devices that
// hold them, and each device holds both copies' layers.
#include "base/registry.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/test_models.hpp"
#include "tests/training_helpers.hpp"

#include <gtest/gtest.h>

namespace {
cs::TrainingParams w1f1b(cs::TrainingParams w)
{
  w.parallel.vpp = 1;
  return w;
}
} // namespace

TEST(DualPipeTraining, TheTwoCopiesOfAStageReduceTheirGradientsTogether)
{
  auto cost = cs::make_cost_model(*cs::DeviceCatalog::builtin().find("h100-sxm5"), *cs::builtin_profile("h100-sxm5"));
  const auto platform = cs::testing::one_h100_node(4);
  cs::TrainingParams w;
  w.model = cs::testing::model(8, 512, 2048, 8, 256, 1000);
  w.batch = cs::BatchParams{8, 1};
  w.parallel.pp = 4;
  w.parallel.vpp = 2;
  w.iterations = 1;
  // One replica: with one copy of the model there is nothing to reduce; with two, each stage's copies sum.
  const auto v = cs::testing::build_transformer_training(w, *cost, 1, 4, "dualpipev", platform);
  const auto dual = cs::testing::build_transformer_training(w, *cost, 1, 4, "dualpipe", platform);
  auto gradient_bytes = [](const cs::TaskGraph& g, bool* twins_only) {
    double bytes = 0;
    for (const cs::Task& t : g.tasks())
      if (t.kind == cs::TaskKind::TRANSFER && t.labels.comm == cs::CommKind::GRADIENT_SYNC) {
        bytes += t.bytes;
        *twins_only = *twins_only && t.host + t.dst == 3; // device d with device pp - 1 - d
      }
    return bytes;
  };
  bool twins_only = true;
  EXPECT_EQ(gradient_bytes(v.training.graph, &twins_only), 0.0);
  const double reduced = gradient_bytes(dual.training.graph, &twins_only);
  EXPECT_TRUE(twins_only);
  // Two copies of a stage reduce as two replicas of it do: the same bytes as 1F1B over pp 4 with dp 2, whose stages
  // hold the same layers.
  const auto replicas =
      cs::testing::build_transformer_training(w1f1b(w), *cost, 2, 4, "1f1b", cs::testing::one_h100_node(8));
  bool anywhere = true;
  EXPECT_GT(reduced, 0.0);
  EXPECT_DOUBLE_EQ(reduced, gradient_bytes(replicas.training.graph, &anywhere));
  double one_copy = 0;
  for (int vs = 0; vs < dual.stages.map.chain_length(); ++vs)
    one_copy += dual.stages.stages[vs].params;
  EXPECT_NEAR(one_copy, cs::total_parameters(w.model), 1e-9 * one_copy);
  // Every device holds a stage of each copy: twice the layers DualPipeV's hold.
  for (int d = 0; d < 4; ++d)
    EXPECT_EQ(dual.training.layers_per_device[d], 2 * v.training.layers_per_device[d]);
}
