// Sliding-window attention: the core split into full and windowed layers, its parameters, and the bad input refused.
#include "models/kernels/kernel.hpp"
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/transformer.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/test_support.hpp"
#include "workloads/training/training_workload.hpp"

#include <gtest/gtest.h>

namespace {

const std::string kSwaBase = "name: t\ncluster: {device: h100-sxm5, nodes: 1, gpus_per_node: 8}\nworkload:\n  kind: "
                             "transformer-training\n  batch: {global: 8, micro: 1}\n  model:\n    layers: 2\n    "
                             "hidden: 2880\n    heads: 64\n    kv_heads: 8\n    head_dim: 64\n    seq: 4096\n    "
                             "vocab: 1000\n";

double core_flops(const cs::PassKernels& k, const std::string& prefix)
{
  double f = 0;
  for (const auto& n : k.forward)
    if (n.name.rfind(prefix, 0) == 0 && std::holds_alternative<cs::AttentionKernel>(n.kernel))
      f += cs::kernel_flops(n.kernel);
  return f;
}

} // namespace

TEST(AttentionSlidingWindow, AlternatingLayersPriceHalfFullHalfWindowed)
{
  const auto swa =
      cs::testing::write_temp("swa.yaml", kSwaBase + "    sliding_window: {window: 128, full_every: 2, sinks: true}\n");
  const auto plain = cs::testing::write_temp("plain.yaml", kSwaBase);
  const cs::Scenario s = cs::load_scenario(swa.string(), {}), p = cs::load_scenario(plain.string(), {});
  const auto& ms = cs::workload_as<cs::TrainingWorkload>(s).params.model;
  const auto& mp = cs::workload_as<cs::TrainingWorkload>(p).params.model;
  cs::LayerShape shape;
  shape.micro = 1;
  const auto ks = cs::layer_kernels(ms, shape), kp = cs::layer_kernels(mp, shape);
  const double full = core_flops(kp, "attention");
  // Half the layers causal over 4,096 keys, half every query over 128 keys (not causal: a full window each).
  EXPECT_DOUBLE_EQ(core_flops(ks, "attention") - core_flops(ks, "attention_window"), full / 2);
  EXPECT_DOUBLE_EQ(core_flops(ks, "attention_window"), 2 * 4.0 * 0.5 * 64 * 4096 * 128 * 64 / 2);
  // The projections are grouped-query attention's; the sinks add a logit a head.
  EXPECT_DOUBLE_EQ(cs::attention_kind_of(ms).weights(ms), cs::attention_kind_of(mp).weights(mp));
  EXPECT_DOUBLE_EQ(cs::layer_parameters(ms) - cs::layer_parameters(mp), 64);
}

TEST(AttentionSlidingWindow, BadWindowsAreRefusedAtTheirKey)
{
  auto error = [](const std::string& text) {
    const auto file = cs::testing::write_temp("swabad.yaml", text);
    return cs::testing::clustersim("validate " + file.string());
  };
  for (const auto& [block, where] : std::vector<std::pair<std::string, std::string>>{
           {"    sliding_window: {window: 8192}\n", "window (8192) exceeds the sequence (4096)"},
           {"    sliding_window: {window: 0}\n", "must be positive"},
           {"    sliding_window: {full_every: 2}\n", "missing required key"},
           {"    attention: materialized\n    sliding_window: {window: 128}\n", "priced on fused attention"}}) {
    const auto r = error(kSwaBase + block);
    EXPECT_EQ(r.code, 2) << block;
    EXPECT_NE(r.err.find(where), std::string::npos) << block << r.err;
  }
}
