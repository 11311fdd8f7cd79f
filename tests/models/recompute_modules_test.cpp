// Selective recomputation by module (workload.model.recompute_modules, Megatron-Core's --recompute-modules).
#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/memory_footprint.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"
#include "tests/test_models.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

namespace {

using cs::testing::device;
using cs::testing::profile;
using cs::testing::src;

cs::ModelParams llama(const std::string& recompute, std::vector<std::string> modules)
{
  cs::ModelParams m(cs::testing::model(32, 4096, 14336, 32, 8192, 128256, "bf16", recompute.c_str()));
  m.kv_heads = 8;
  m.mlp = "swiglu";
  m.norm = cs::Norm::RMSNORM;
  m.bias = false;
  m.recompute_modules = std::move(modules);
  return m;
}

struct Outcome {
  double activations, backward;
};

Outcome outcome(const cs::ModelParams& m)
{
  cs::MemoryLayout layout;
  layout.parallel.tp = 2;
  layout.parallel.sequence_parallel = true;
  cs::LayerShape shape;
  shape.parallel = layout.parallel;
  const auto cost = cs::make_cost_model(device("h100-sxm5"), profile("h100-sxm5"));
  const cs::PieceTimes t = cs::piece_times(cs::layer_kernels(m, shape), *cost, shape.framework, 0, m.recompute,
                                           shape.parallel.tp, m.recompute_modules);
  return {cs::transformer_memory(m, 1, layout).activations, t.backward};
}

} // namespace

TEST(RecomputeModules, EachModuleTradesItsActivationsForItsForwardAgain)
{
  const Outcome none = outcome(llama("none", {})), attn = outcome(llama("selective", {}));
  const Outcome mlp = outcome(llama("selective", {"mlp"})), norm = outcome(llama("selective", {"layernorm"}));
  const Outcome both = outcome(llama("selective", {"layernorm", "mlp"})), full = outcome(llama("full", {}));
  // Fused attention keeps no scores: Megatron's default module (core_attn) changes nothing here.
  EXPECT_DOUBLE_EQ(attn.activations, none.activations);
  EXPECT_DOUBLE_EQ(attn.backward, none.backward);
  // The MLP's inner activations are most of a SwiGLU layer's; dropping them costs the MLP's forward again.
  EXPECT_LT(mlp.activations, 0.7 * none.activations);
  EXPECT_GT(mlp.backward, none.backward);
  EXPECT_LT(norm.activations, none.activations);
  EXPECT_GT(norm.backward, none.backward);
  EXPECT_LT(norm.backward - none.backward, mlp.backward - none.backward); // norms are cheap to rerun
  EXPECT_LT(both.activations, mlp.activations);
  EXPECT_GT(both.activations, full.activations); // full keeps only each layer's input
  EXPECT_LT(both.backward, full.backward);
  // Hardware FLOPs count the MLP's forward again; model FLOPs do not change.
  EXPECT_GT(cs::hardware_model_flops(llama("selective", {"mlp"}), 8), cs::hardware_model_flops(llama("none", {}), 8));
  EXPECT_EQ(cs::megatron_model_flops(llama("selective", {"mlp"}), 8), cs::megatron_model_flops(llama("none", {}), 8));
}

TEST(RecomputeModules, ScenariosNameModulesMegatronCoreKnows)
{
  const std::string q = "validate " + src("scenarios/reference/nemo-llama3-8b-cp2-fp8.yaml") + " ";
  auto ok = cs::testing::run_clustersim(
      q + "--set workload.model.recompute=selective --set 'workload.model.recompute_modules=[layernorm, mlp]'");
  EXPECT_EQ(ok.code, 0) << ok.err;
  struct Case {
    std::string sets, words;
  } cases[] = {{"--set 'workload.model.recompute_modules=[mlp]'", "needs recompute: selective"},
               {"--set workload.model.recompute=selective --set 'workload.model.recompute_modules=[mpl]'",
                "unknown recompute module 'mpl'"},
               {"--set workload.model.recompute=selective --set 'workload.model.recompute_modules=[moe_act]'",
                "not modelled yet"}};
  for (const Case& c : cases) {
    auto r = cs::testing::run_clustersim(q + c.sets);
    EXPECT_EQ(r.code, 2) << c.sets;
    EXPECT_NE(r.err.find(c.words), std::string::npos) << c.sets << "\n" << r.err;
  }
}
