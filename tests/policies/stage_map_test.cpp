// A schedule owns its stage map: every registered schedule, and one (registered here, in the test binary only) whose
// map is not chunk x devices + device, runs through the pipeline emitter, the training builder, the planner's bound
// and the planner.
#include "base/registry.hpp"
#include "models/cost/device_profile.hpp"
#include "sim/exec/executor.hpp"
#include "sim/plan/pipeline_bound.hpp"
#include "sim/plan/planner.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/run/scenario_run.hpp"
#include "tests/plan/every_plan.hpp"
#include "tests/test_models.hpp"
#include "tests/training_helpers.hpp"
#include "workloads/training/pipeline_graph.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace cs {

/** A test schedule: two chunks per device placed in a V (device d holds stages d and 2p - 1 - d, so the model turns
 *  around on the last device, as DualPipeV and ZB-V place it), run GPipe-style: every first-chunk forward, every
 *  second-chunk forward, then the backwards the other way round. */
class VShapeTestSchedule : public PipelineSchedule {
public:
  int chunks(int) const override { return 2; }
  StageMap stage_map(int devices, int chunks) const override
  {
    std::vector<std::vector<int>> table(static_cast<std::size_t>(devices));
    for (int d = 0; d < devices; ++d)
      table[d] = {d, 2 * devices - 1 - d};
    return StageMap::from_table(table);
  }
  std::vector<std::vector<PipelineOp>> order(int devices, int chunks, int m) const override
  {
    std::vector<std::vector<PipelineOp>> ops(devices);
    for (int d = 0; d < devices; ++d) {
      for (int chunk : {0, 1})
        for (int mb = 0; mb < m; ++mb)
          ops[d].push_back(PipelineOp::F(mb, chunk));
      for (int chunk : {1, 0})
        for (int mb = m - 1; mb >= 0; --mb)
          ops[d].push_back(PipelineOp::B(mb, chunk));
    }
    return ops;
  }
};

CS_REGISTER_POLICY(PipelineSchedule, VShapeTestSchedule, "pipeline", "v-shape-test",
                   "test only: GPipe order over two chunks per device placed in a V");

} // namespace cs

namespace {

std::unique_ptr<cs::PipelineSchedule> schedule(const std::string& name)
{
  return cs::Registry<cs::PipelineSchedule>::instance().create(name);
}

} // namespace

TEST(StageMap, InterleavedNumbersChunksAfterDevices)
{
  const auto map = cs::StageMap::interleaved(4, 2);
  EXPECT_EQ(map.stages(), 8);
  EXPECT_EQ(map.stage(1, 1), 5);
  EXPECT_EQ(map.device_of(6), 2);
  EXPECT_EQ(map.chunk_of(6), 1);
  EXPECT_TRUE(map.is_interleaved());
  const auto v = schedule("v-shape-test")->stage_map(4, 2);
  EXPECT_FALSE(v.is_interleaved());
  EXPECT_EQ(v.stage(0, 1), 7); // the first device also holds the last stage
  EXPECT_EQ(v.device_of(4), 3);
}

TEST(StageMap, RefusesATableThatIsNotOneStageEach)
{
  EXPECT_THROW(cs::StageMap::from_table({{0, 1}, {1, 2}}), std::invalid_argument); // stage 1 twice, 3 never
  EXPECT_THROW(cs::StageMap::from_table({{0, 1}, {2}}), std::invalid_argument);    // uneven chunks
  EXPECT_THROW(cs::StageMap::from_table({{0, 4}, {1, 2}}), std::invalid_argument); // out of range
  EXPECT_THROW(cs::StageMap::interleaved(0, 1), std::invalid_argument);
}

TEST(StageMap, AVShapedPipelineTurnsAroundOnItsLastDeviceWithoutASend)
{
  // Uniform stages of forward 1 s and backward 2 s per microbatch and chunk, 1 GB of activations per edge.
  const int p = 4, m = 4;
  auto v = schedule("v-shape-test");
  cs::StageCost c;
  c.forward_s = 1;
  c.backward_s = 2;
  c.activation_bytes = 1e9;
  const auto pipe = cs::build_pipeline(*v, p, 2, m, std::vector<cs::StageCost>(2 * p, c), {0, 1, 2, 3});
  int sends = 0;
  for (const auto& t : pipe.graph.tasks())
    sends += t.kind == cs::TaskKind::TRANSFER ? 1 : 0;
  // 2p - 1 edges between stages each way, one of them (stage p - 1 to p) inside the last device.
  EXPECT_EQ(sends, m * 2 * (2 * p - 2));
  // Every device computes 2m (1 + 2) s; GPipe's order over 2p stages idles (2p - 1) stage passes of 3 s in all.
  const double t = cs::run_analytical(pipe.graph, cs::testing::one_h100_node(p)).makespan;
  EXPECT_GE(t, 2.0 * m * 3.0);
  EXPECT_LE(t, 2.0 * m * 3.0 + (2 * p - 1) * 3.0 + 8 * 1e9 / 300e9 * (2 * p));
}

TEST(StageMap, BalancedPartitionFollowsTheMap)
{
  // In a V the first device runs both the embedding and the output layer: it keeps fewer layers than the rest.
  const auto v = schedule("v-shape-test")->stage_map(4, 2);
  const auto layers = cs::partition_layers(32, v, 1.0, 3.0, true, 1.0);
  int first = 0, sum = 0;
  for (int c = 0; c < 2; ++c)
    first += layers[v.stage(0, c)];
  for (int n : layers)
    sum += n;
  EXPECT_EQ(sum, 32);
  EXPECT_EQ(first, 5); // 5 + 4 = 9 s, as the others' 27 / 3 layers: one more would make it the slowest
  // Interleaved, the same numbers split over two ends: the embedding's device and the output layer's.
  const auto inter = cs::partition_layers(32, cs::StageMap::interleaved(4, 2), 1.0, 3.0, true, 1.0);
  EXPECT_EQ(inter[3] + inter[7], 6);
}

TEST(StageMap, EveryRegisteredScheduleRunsThroughTheBuilderAndTheBound)
{
  const auto& registry = cs::Registry<cs::PipelineSchedule>::instance();
  ASSERT_TRUE(registry.has("v-shape-test"));
  auto cost = cs::make_cost_model(*cs::DeviceCatalog::builtin().find("h100-sxm5"), *cs::builtin_profile("h100-sxm5"));
  const auto platform = cs::testing::one_h100_node(8);
  for (const auto& name : registry.names()) {
    cs::TrainingParams w;
    w.model = cs::testing::model(8, 512, 2048, 8, 256, 1000);
    w.batch = cs::BatchParams{16, 2};
    w.parallel.pp = 2;
    w.parallel.vpp = registry.create(name)->chunks(2);
    w.iterations = 1;
    const auto built = cs::testing::build_transformer_training(w, *cost, 2, 2, name, platform);
    const auto& map = built.stages.map;
    EXPECT_EQ(map.chunks(), w.parallel.vpp) << name;
    int layers = 0;
    for (int d = 0; d < 2; ++d)
      layers += built.training.layers_per_device[d];
    EXPECT_EQ(layers, 8 * map.chains()) << name; // DualPipe's devices hold two copies
    const double simulated = cs::run_analytical(built.training.graph, platform).makespan;
    cs::Plan plan;
    plan.parallel = cs::testing::stage_shape(w, 2, 2).parallel;
    plan.schedule = name;
    plan.micro = 2;
    const double bound = cs::pipeline_compute_bound(w, plan, {}, *cost, platform, 4);
    EXPECT_GT(bound, 0) << name;
    EXPECT_LE(bound, simulated * (1 + 1e-9)) << name;
  }
}

TEST(StageMap, ThePlannerSearchesAVShapedSchedule)
{
  const std::string path = ::testing::TempDir() + "/cs_vplan_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << R"(name: v-plan
backend: analytical
cluster:
  device: h100-sxm5
  nodes: 1
  gpus_per_node: 4
  intra_node: {kind: nvswitch}
  network: {kind: fat-tree, nic_bandwidth: 400Gb/s, nics_per_node: 4}
workload:
  kind: transformer-training
  model: {layers: 8, hidden: 1024, heads: 8, seq: 512, vocab: 32000, dtype: bf16}
  batch: {global: 16, micro: 2}
  iterations: 1
policies: {sync: ring-allreduce}
)";
  cs::Scenario base = cs::load_scenario(path, {});
  cs::check_scenario(base);
  const auto every = cs::testing::every_plan(base, 4);
  int v_plans = 0;
  for (const auto& p : every.best) {
    if (p.schedule != "v-shape-test")
      continue;
    ++v_plans;
    EXPECT_EQ(p.parallel.vpp, 2);
    EXPECT_LE(p.bound_s, p.iteration_s * (1 + 1e-9)) << p.parallel.pp;
    EXPECT_GT(p.memory_bytes, 0);
  }
  EXPECT_GT(v_plans, 0);
}
