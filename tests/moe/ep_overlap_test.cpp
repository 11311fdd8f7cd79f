// Overlapped MoE schedules end to end: Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm) without
// pipelining and interleaved, DualPipeV, and the shared experts beside the all-to-alls, on the Mixtral example: the
// all-to-all hides, the step shortens, the pair holds a layer more of activations, the two backends agree, and what
// Megatron-Core refuses is refused at its key.
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>

namespace fs = std::filesystem;

namespace {

using cs::testing::src;

const std::string kMixtral = "scenarios/moe-mixtral.yaml";
const std::string kOverlap = " --set workload.framework.overlap_moe_expert_parallel_comm=true";

// The report's metrics and breakdown in one object.
nlohmann::json overlap_metrics(const std::string& args)
{
  static int count = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("cs_overlap_" + std::to_string(::getpid()) + "_" + std::to_string(++count));
  fs::remove_all(dir);
  auto r = cs::testing::run_clustersim("run " + src(kMixtral) + " --quiet --out " + dir.string() + args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  std::ifstream in(dir / "report.json");
  auto json = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(dir);
  if (json.is_discarded())
    return nlohmann::json::object();
  nlohmann::json out = json["metrics"];
  out.update(json["breakdown"]);
  return out;
}

double step(const nlohmann::json& m) { return m.value("iteration_time_s", -1.0); }
double exposed(const nlohmann::json& m) { return m.value("alltoall_exposed_fraction", -1.0); }

} // namespace

TEST(EpOverlap, CombinedOneFOneBHidesTheAllToAllAndHoldsOneLayerMore)
{
  const auto plain = overlap_metrics(""), paired = overlap_metrics(kOverlap);
  EXPECT_GT(exposed(plain), 0.95); // nothing to hide under without pairing
  EXPECT_LT(exposed(paired), 0.75);
  EXPECT_LT(step(paired), 0.85 * step(plain));
  // The pair frees a backward layer as it builds a forward one: one layer of activations more, not a microbatch.
  EXPECT_GT(paired.value("peak_memory_bytes", 0.0), plain.value("peak_memory_bytes", 0.0));
  const double held = paired.value("memory_in_flight_microbatches", 0.0);
  EXPECT_GT(held, plain.value("memory_in_flight_microbatches", 0.0));
  EXPECT_LT(held, plain.value("memory_in_flight_microbatches", 0.0) + 0.5);
  // The same expert traffic: the pairing reorders, it does not remove.
  EXPECT_DOUBLE_EQ(paired.value("network_bytes", -1.0), plain.value("network_bytes", -2.0));
  const auto flows = overlap_metrics(kOverlap + " --backend simgrid");
  EXPECT_NEAR(step(flows) / step(paired), 1.0, 0.01);
}

TEST(EpOverlap, InterleavedCombinedOneFOneBIsFaster)
{
  const std::string interleaved = " --set workload.parallel.pp=2 --set workload.parallel.vpp=2";
  const auto plain = overlap_metrics(interleaved), paired = overlap_metrics(interleaved + kOverlap);
  EXPECT_LT(step(paired), 0.9 * step(plain));
  EXPECT_LT(exposed(paired), exposed(plain));
}

TEST(EpOverlap, DualPipeVOverlapsForwardAndBackwardChunks)
{
  // 32 microbatches a step: the steady state, where every op is paired, is most of it. Balanced routing: under the
  // example's Zipf skew every all-to-all also waits for the hottest rank's experts, which no schedule hides.
  const std::string pp =
      " --set workload.parallel.pp=2 --set workload.batch.global=256 --set policies.moe_routing=balanced";
  const auto one = overlap_metrics(pp), dual = overlap_metrics(pp + " --set policies.pipeline=dualpipev");
  EXPECT_GT(exposed(one), 0.95);
  EXPECT_LT(exposed(dual), 0.2);
  EXPECT_LT(step(dual), 0.9 * step(one));
  const auto flows = overlap_metrics(pp + " --set policies.pipeline=dualpipev --backend simgrid");
  EXPECT_NEAR(step(flows) / step(dual), 1.0, 0.01);
}

TEST(EpOverlap, DualPipeFeedsTwoCopiesFromBothEnds)
{
  // DualPipe on the same shape: device d holds stage d of one copy and stage 1 - d of the other, each half the
  // microbatches. The all-to-alls hide as under DualPipeV; both ends now feed, so the step is shorter still, and each
  // device holds twice the weights while ZeRO shards the two copies' optimizer state over both.
  const std::string pp =
      " --set workload.parallel.pp=2 --set workload.batch.global=256 --set policies.moe_routing=balanced";
  const auto one = overlap_metrics(pp), v = overlap_metrics(pp + " --set policies.pipeline=dualpipev"),
             dual = overlap_metrics(pp + " --set policies.pipeline=dualpipe");
  EXPECT_LT(exposed(dual), 0.2);
  EXPECT_LT(step(dual), 0.9 * step(one));
  EXPECT_LT(step(dual), step(v));
  EXPECT_GT(dual.value("memory_parameters_bytes", 0.0), 1.8 * v.value("memory_parameters_bytes", 0.0));
  EXPECT_NEAR(dual.value("memory_optimizer_bytes", 0.0) / v.value("memory_optimizer_bytes", 1.0), 1.0, 0.05);
  // The same tokens, and the same tensor-parallel traffic: each copy runs half the microbatches.
  EXPECT_DOUBLE_EQ(dual.value("tokens_per_s", 0.0) * step(dual), v.value("tokens_per_s", 0.0) * step(v));
  EXPECT_DOUBLE_EQ(dual.value("tp_communication_s", -1.0), v.value("tp_communication_s", -2.0));
  const auto flows = overlap_metrics(pp + " --set policies.pipeline=dualpipe --backend simgrid");
  EXPECT_NEAR(step(flows) / step(dual), 1.0, 0.01);
}

TEST(EpOverlap, DeepEpTakesItsSmsFromTheComputeItRunsBeside)
{
  // DeepEP's 20 SMs of the H100's 132 slow the compute the paired op runs beside its all-to-all; without pairing
  // nothing runs beside it.
  const std::string deepep = " --set workload.model.moe.dispatcher=deepep";
  const auto few = overlap_metrics(deepep + kOverlap + " --set workload.model.moe.deepep_sms=8");
  const auto many = overlap_metrics(deepep + kOverlap + " --set workload.model.moe.deepep_sms=40");
  EXPECT_GT(many.value("compute_s", 0.0), few.value("compute_s", 0.0));
  const auto alone = overlap_metrics(deepep + " --set workload.model.moe.deepep_sms=40");
  EXPECT_DOUBLE_EQ(alone.value("compute_s", -1.0), overlap_metrics(deepep).value("compute_s", -2.0));
}

TEST(EpOverlap, SharedExpertsRunBesideTheDispatchAndTheCombinesGradient)
{
  // Megatron-Core's --moe-shared-expert-overlap: the shared expert (here one of Mixtral's expert size) computes while
  // the dispatch and the combine's gradient cross; it loses SMs to them, and moves nothing more.
  const std::string shared = " --set workload.model.moe.shared_experts=1";
  const auto before = overlap_metrics(shared),
             after = overlap_metrics(shared + " --set workload.framework.moe_shared_expert_overlap=true");
  EXPECT_DOUBLE_EQ(exposed(before), 1.0);
  EXPECT_LT(exposed(after), 0.95);
  EXPECT_LT(step(after), 0.97 * step(before));
  EXPECT_GT(after.value("compute_s", 0.0), before.value("compute_s", 0.0));
  EXPECT_DOUBLE_EQ(after.value("network_bytes", -1.0), before.value("network_bytes", -2.0));
}

TEST(EpOverlap, DelayedExpertWeightGradientsRunBesideTheDispatchGradient)
{
  // --delay-wgrad-compute: the routed experts' weight gradients move after the dispatch's gradient is sent, so they
  // run beside it: more of the all-to-all hidden and a shorter step, with the same traffic. The same work, a little
  // slower where it now shares the GPU with the all-to-all's kernels (the framework's comm_sm_fraction).
  const auto paired = overlap_metrics(kOverlap),
             delayed = overlap_metrics(kOverlap + " --set workload.framework.delay_wgrad_compute=true");
  EXPECT_LT(step(delayed), step(paired));
  EXPECT_LT(exposed(delayed), exposed(paired));
  EXPECT_DOUBLE_EQ(delayed.value("network_bytes", -1.0), paired.value("network_bytes", -2.0));
  EXPECT_GE(delayed.value("compute_s", -1.0), paired.value("compute_s", -2.0));
  EXPECT_LT(delayed.value("compute_s", -1.0), 1.02 * paired.value("compute_s", -2.0));
}

TEST(EpOverlap, WhatMegatronCoreRefusesIsRefusedAtItsKey)
{
  const std::vector<std::pair<std::string, std::string>> cases{
      {kOverlap + " --set workload.parallel.pp=2", "needs the interleaved schedule (vpp > 1)"},
      {kOverlap + " --set workload.model.moe.dispatcher=allgather", "alltoall, deepep or hybridep dispatcher"},
      {kOverlap + " --set workload.model.recompute=full", "full recomputation"},
      {kOverlap + " --set workload.parallel.ep=1", "needs expert parallelism"},
      {kOverlap + " --set policies.pipeline=gpipe", "has its own order"},
      {" --set workload.parallel.pp=2 --set policies.pipeline=dualpipev --set workload.batch.global=24",
       "dualpipev needs at least 2 x pp = 4 microbatches per step, not 3"},
      {kOverlap + " --set workload.parallel.zero=3", "not modelled with ZeRO-3"},
      {" --set workload.parallel.pp=2 --set policies.pipeline=dualpipev --set workload.parallel.zero=3",
       "dualpipev overlaps passes, which ZeRO-3"},
      {" --set workload.model.moe.deepep_sms=0", "deepep_sms"},
      {" --set workload.model.moe.dispatcher=deepep --set cluster.intra_node.kind=pcie",
       "deepep dispatcher forwards tokens over NVLink inside a node"},
      {" --set workload.framework.moe_shared_expert_overlap=true", "needs shared experts"},
      {" --set workload.model.moe.shared_experts=1 --set workload.framework.moe_shared_expert_overlap=true"
       " --set workload.model.moe.dispatcher=allgather",
       "shared-expert overlap runs with the alltoall, deepep or hybridep dispatcher"},
      {" --set workload.model.moe.shared_experts=1 --set workload.framework.moe_shared_expert_overlap=true" + kOverlap,
       "are not used together"},
      {" --set workload.framework.delay_wgrad_compute=true", "needs the all-to-all overlap"},
      {" --set policies.pipeline=dualpipe",
       "policies.pipeline=dualpipe: dualpipe pairs device d with device pp - 1 - d: "
       "it needs an even pp, not 1"},
      {" --set workload.parallel.pp=2 --set policies.pipeline=dualpipe --set workload.batch.global=40",
       "dualpipe sends half the step's microbatches each way: it needs an even number of them, at least 2 x pp = 4, "
       "not 5"},
      {" --set workload.parallel.pp=2 --set policies.pipeline=dualpipe --set workload.parallel.stage_layers=[1,1,3,3]",
       "stage_layers needs pp = 2 (a copy of the model's) entries"},
  };
  const fs::path dir = fs::temp_directory_path() / ("cs_overlap_bad_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const auto& [args, words] : cases) {
    auto r = cs::testing::run_clustersim("run " + src(kMixtral) + " --quiet --out " + dir.string() + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(":[0-9]+:[0-9]+: "))) << r.err; // file:line:col or --set:1:N
    EXPECT_FALSE(fs::exists(dir)) << args;
  }
}
