// clustersim import: Megatron arguments, Megatron-Bridge overrides and torchtitan TOML read into scenarios that match
// the reference scenarios written by hand, warnings that name what is not modelled, and bad input refused.
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/transformer.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/cli/import_run.hpp"
#include "tests/test_support.hpp"
#include "workloads/training/training_workload.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>

namespace {

using cs::testing::clustersim;
using cs::testing::src;

std::string data(const std::string& name) { return src("tests/data/import/" + name); }

using cs::testing::import_file;
using Imported = cs::testing::ImportResult;

// Imports Megatron-LM arguments `args` for 8 GPUs, expecting success.
Imported import_args(const std::string& args)
{
  const auto file = cs::testing::write_temp("args.args", args);
  Imported i = import_file(file.string(), "--gpus 8");
  EXPECT_EQ(i.r.code, 0) << args << ": " << i.r.err;
  return i;
}

const cs::TrainingParams& training(const cs::Scenario& s) { return cs::workload_as<cs::TrainingWorkload>(s).params; }

// The step-shaping fields of two scenarios' training workloads are the same.
void expect_same_run(const cs::Scenario& a, const cs::Scenario& b)
{
  const auto &x = training(a), &y = training(b);
  EXPECT_EQ(x.model.layers, y.model.layers);
  EXPECT_EQ(x.model.hidden, y.model.hidden);
  EXPECT_EQ(x.model.ffn, y.model.ffn);
  EXPECT_EQ(x.model.heads, y.model.heads);
  EXPECT_EQ(x.model.kv(), y.model.kv());
  EXPECT_EQ(x.model.seq, y.model.seq);
  EXPECT_EQ(x.model.vocab, y.model.vocab);
  EXPECT_EQ(x.model.mlp, y.model.mlp);
  EXPECT_EQ(x.model.norm, y.model.norm);
  EXPECT_EQ(x.model.position_embedding, y.model.position_embedding);
  EXPECT_EQ(x.model.tie_embeddings, y.model.tie_embeddings);
  EXPECT_EQ(x.model.bias, y.model.bias);
  EXPECT_EQ(x.model.dtype, y.model.dtype);
  EXPECT_EQ(x.model.attention, y.model.attention);
  EXPECT_EQ(x.model.recompute, y.model.recompute);
  ASSERT_EQ(bool(x.model.fp8), bool(y.model.fp8));
  if (x.model.fp8) {
    EXPECT_EQ(x.model.fp8->name(), y.model.fp8->name());
  }
  EXPECT_EQ(x.parallel.tp, y.parallel.tp);
  EXPECT_EQ(x.parallel.pp, y.parallel.pp);
  EXPECT_EQ(x.parallel.vpp, y.parallel.vpp);
  EXPECT_EQ(x.parallel.cp, y.parallel.cp);
  EXPECT_EQ(x.parallel.zero, y.parallel.zero);
  EXPECT_EQ(x.parallel.sequence_parallel, y.parallel.sequence_parallel);
  EXPECT_EQ(x.parallel.placement, y.parallel.placement);
  EXPECT_EQ(x.parallel.stage_layers, y.parallel.stage_layers);
  EXPECT_EQ(x.parallel.account_for_embedding, y.parallel.account_for_embedding);
  EXPECT_EQ(x.parallel.account_for_loss, y.parallel.account_for_loss);
  EXPECT_EQ(x.framework.name, y.framework.name);
  EXPECT_EQ(x.framework.cross_entropy_fusion, y.framework.cross_entropy_fusion);
  EXPECT_EQ(x.framework.fused_rope, y.framework.fused_rope);
  EXPECT_EQ(x.framework.repeat_kv, y.framework.repeat_kv);
  EXPECT_EQ(x.framework.dropout, y.framework.dropout);
  EXPECT_EQ(x.framework.tp_comm_overlap, y.framework.tp_comm_overlap);
  EXPECT_EQ(x.framework.fp8_param_gather, y.framework.fp8_param_gather);
  EXPECT_EQ(x.batch.micro, y.batch.micro);
  EXPECT_EQ(x.batch.global, y.batch.global);
  EXPECT_EQ(a.cluster.nodes * a.cluster.gpus_per_node, b.cluster.nodes * b.cluster.gpus_per_node);
}

} // namespace

TEST(Import, MegatronArgumentsGiveTheMegatronBridgeLlama3Row)
{
  const auto i = import_file(data("mbridge-llama3-70b-fp8.args"));
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const cs::Scenario imported = cs::load_scenario(i.file.string(), {});
  const cs::Scenario reference = cs::load_scenario(src("scenarios/reference/mbridge-llama3-70b-fp8.yaml"), {});
  expect_same_run(imported, reference);
  EXPECT_EQ(imported.cluster.gpus_per_node, 8); // torchrun's --nproc_per_node
  // What it did not model is named: the learning rate, the data, the tokenizer.
  EXPECT_NE(i.r.err.find("--lr 3e-4"), std::string::npos) << i.r.err;
  EXPECT_NE(i.r.err.find("--tokenizer-model"), std::string::npos);
  EXPECT_EQ(i.r.err.find("not known to the importer"), std::string::npos) << i.r.err;
}

TEST(Import, PublishedRowsWrittenAsMegatronArgumentsSimulateAsTheirReferenceScenarios)
{
  // validation.md §6 rows as their runs were launched: the imported scenario simulates the hand-written reference's
  // step and memory exactly, but for the cluster block the input does not carry (the spread of GPU speeds is set to
  // none on both). A dense row, the context-parallel one, the MoE one (EP 16, forced load balancing) and GPT-OSS's
  // (a sliding window every other layer with sinks, recomputed modules, an all-to-all with a DeepEP backend that only
  // the flex dispatcher would read).
  for (const char* row :
       {"mbridge-llama3-70b-fp8", "nemo-llama3-8b-cp2-fp8", "mbridge-qwen3-30b-a3b-fp8", "mbridge-gpt-oss-120b"}) {
    const auto i = import_file(data(std::string(row) + ".args"));
    ASSERT_EQ(i.r.code, 0) << row << "\n" << i.r.err;
    EXPECT_EQ(i.r.err.find("not known to the importer"), std::string::npos) << row << "\n" << i.r.err;
    if (std::string(row) == "mbridge-gpt-oss-120b") { // the backend it sets is named as not read
      EXPECT_NE(i.r.err.find("--moe-flex-dispatcher-backend deepep (read only with the flex dispatcher type)"),
                std::string::npos)
          << i.r.err;
    }
    auto metrics = [&](const std::string& scenario) {
      const auto out = cs::testing::fresh_dir(std::string("import_run_") + row);
      const auto r =
          clustersim("run " + scenario + " --quiet --set 'cluster.stragglers={spread: 0}' --out " + out.string());
      EXPECT_EQ(r.code, 0) << scenario << "\n" << r.err;
      std::ifstream in(out / "report.json");
      const auto json = nlohmann::json::parse(in, nullptr, false);
      return json.is_discarded() ? nlohmann::json::object() : json["metrics"];
    };
    const auto imported = metrics(i.file.string()),
               reference = metrics(src("scenarios/reference/" + std::string(row) + ".yaml"));
    EXPECT_DOUBLE_EQ(imported.value("iteration_time_s", 0.0), reference.value("iteration_time_s", 1.0)) << row;
    EXPECT_DOUBLE_EQ(imported.value("peak_memory_bytes", 0.0), reference.value("peak_memory_bytes", 1.0)) << row;
  }
}

TEST(Import, MegatronBridgeOverridesGiveTheSameRun)
{
  const auto i = import_file(data("mbridge-llama3-70b-fp8.overrides"), "--gpus 64");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  expect_same_run(cs::load_scenario(i.file.string(), {}),
                  cs::load_scenario(src("scenarios/reference/mbridge-llama3-70b-fp8.yaml"), {}));
  EXPECT_NE(i.r.err.find("checkpoint.save=null"), std::string::npos) << i.r.err;
}

TEST(Import, BridgeFieldsOnByDefaultCanBeTurnedOff)
{
  // overlap_p2p_comm and gradient_accumulation_fusion are on unless told: false is their --no- switch, not "left off".
  auto framework = [](const std::string& overrides) {
    const std::string model = "model.num_layers=8 model.hidden_size=1024 model.num_attention_heads=8 "
                              "model.seq_length=2048 train.global_batch_size=16 train.micro_batch_size=1 ";
    const auto file = cs::testing::write_temp("fields.overrides", model + overrides);
    const auto i = import_file(file.string(), "--gpus 8");
    EXPECT_EQ(i.r.code, 0) << i.r.err;
    return training(cs::load_scenario(i.file.string(), {})).framework;
  };
  const auto off = framework("comm_overlap.overlap_p2p_comm=false model.gradient_accumulation_fusion=false");
  EXPECT_FALSE(off.overlap_p2p_comm);
  EXPECT_FALSE(off.gradient_accumulation_fusion);
  const auto on = framework("comm_overlap.overlap_p2p_comm=true model.gradient_accumulation_fusion=true");
  EXPECT_TRUE(on.overlap_p2p_comm);
  EXPECT_TRUE(on.gradient_accumulation_fusion);
}

TEST(Import, TorchtitanTomlGivesAnFsdpRunOfThePreset)
{
  const auto i = import_file(data("torchtitan-llama3-8b.toml"), "--gpus 8");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const cs::Scenario s = cs::load_scenario(i.file.string(), {});
  const auto& t = training(s);
  EXPECT_EQ(t.model.preset, "llama3-8b");
  EXPECT_EQ(t.model.seq, 8192);
  EXPECT_EQ(t.batch.micro, 2);
  EXPECT_EQ(t.batch.global, 16);              // one local batch on each of 8 data-parallel ranks
  EXPECT_EQ(t.parallel.zero, 3);              // FSDP2 shards everything over data_parallel_shard_degree
  EXPECT_EQ(t.framework.name, "torch-eager"); // its [compile] is off
  EXPECT_EQ(t.model.recompute, cs::Recompute::SELECTIVE);
  // Op-level selective checkpointing is torchtitan's own policy (op_sac), not approximated; optimizer and logging
  // tables are named.
  EXPECT_EQ(t.model.recompute_modules, std::vector<std::string>{"op_sac"});
  EXPECT_EQ(i.r.err.find("selective_ac_option"), std::string::npos) << i.r.err;
  EXPECT_NE(i.r.err.find("optimizer.lr"), std::string::npos);
  // Eager runs the torch-eager profile's kernels; the same configuration compiled, the fused fsdp profile's.
  EXPECT_EQ(i.r.err.find("eager PyTorch"), std::string::npos) << i.r.err;
  std::ifstream in(data("torchtitan-llama3-8b.toml"));
  std::string toml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  toml.replace(toml.find("[compile]\nenable = false"), 24, "[compile]\nenable = true");
  const auto dir = cs::testing::fresh_dir("import_compiled");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "compiled.toml") << toml;
  const auto compiled = import_file((dir / "compiled.toml").string(), "--gpus 8");
  ASSERT_EQ(compiled.r.code, 0) << compiled.r.err;
  EXPECT_EQ(training(cs::load_scenario(compiled.file.string(), {})).framework.name, "fsdp");
}

TEST(Import, TorchtitanLayerLevelCheckpointingRecomputesEveryNthBlockWhole)
{
  // selective_ac_option = "N": every N-th block checkpointed whole (torchtitan's counter over a rank's blocks). The
  // 8B's 32 blocks on one stage: "2" recomputes 16 of them, Megatron's block method; "64", none; "two" is refused.
  std::ifstream in(data("torchtitan-llama3-8b.toml"));
  const std::string toml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto with = [&](const std::string& option) {
    std::string text = toml;
    text.replace(text.find("selective_ac_option = \"op\""), 27, "selective_ac_option = \"" + option + "\"");
    return import_file(cs::testing::write_temp("sac_" + option + ".toml", text).string(), "--gpus 8");
  };
  const auto two = with("2");
  ASSERT_EQ(two.r.code, 0) << two.r.err;
  const cs::Scenario s = cs::load_scenario(two.file.string(), {});
  EXPECT_EQ(training(s).model.recompute, cs::Recompute::FULL);
  EXPECT_EQ(training(s).model.recompute_num_layers, 16);
  EXPECT_EQ(training(s).model.recompute_method, cs::RecomputeMethod::BLOCK);
  EXPECT_EQ(two.r.err.find("selective_ac_option"), std::string::npos) << two.r.err;
  const auto sparse = with("64");
  ASSERT_EQ(sparse.r.code, 0) << sparse.r.err;
  EXPECT_EQ(training(cs::load_scenario(sparse.file.string(), {})).model.recompute, cs::Recompute::NONE);
  const auto bad = with("two");
  EXPECT_EQ(bad.r.code, 2);
  EXPECT_NE(bad.r.err.find("selective_ac_option is \"op\" or a whole number of blocks, not 'two'"), std::string::npos)
      << bad.r.err;
  EXPECT_FALSE(std::filesystem::exists(bad.file));
}

TEST(Import, TorchtitanTensorParallelismShardsTheSequenceToo)
{
  // torchtitan's TP plan puts SequenceParallel on the norms: without it the 70B row's full-recomputation activations
  // came out at 168 GiB a GPU against the 71.9 GiB peak the run published.
  const auto i = import_file(data("torchtitan-llama3-70b.toml"), "--gpus 256 --device h100-96gb-500w");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const cs::Scenario s = cs::load_scenario(i.file.string(), {});
  EXPECT_EQ(training(s).parallel.tp, 8);
  EXPECT_TRUE(training(s).parallel.sequence_parallel);
  const cs::Scenario reference = cs::load_scenario(src("scenarios/reference/torchtitan-llama3-70b-2d.yaml"), {});
  expect_same_run(s, reference);
  const auto out = cs::testing::fresh_dir("import_run_torchtitan_70b");
  const auto r = clustersim("run " + i.file.string() + " --quiet --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(out / "report.json");
  const auto metrics = nlohmann::json::parse(in, nullptr, false)["metrics"];
  EXPECT_TRUE(metrics.value("fits_in_memory", false));
}

// The 405B row's TOML with `from` replaced by `to` (which must be there), imported for its 512 GPUs.
Imported import_405b_with(const std::string& from, const std::string& to, const std::string& name)
{
  std::ifstream in(data("torchtitan-llama3-405b.toml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return import_file(cs::testing::write_temp(name + ".toml", text).string(), "--gpus 512 --device h100-96gb-500w");
}

TEST(Import, TorchtitanPipelinesCutAsTheReleaseOfTheirLayoutDid)
{
  // The 405B row's TOML is in the layout of the December 2024 release its benchmark ran (parallelism in [training]
  // and [experimental]). That release ran as many microbatches as pipeline ranks (the local batch of 32 as 8 of 4)
  // and split the 126 layers evenly, the middle stages taking the remainder: 15, six of 16, 15.
  const auto i = import_file(data("torchtitan-llama3-405b.toml"), "--gpus 512 --device h100-96gb-500w");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const cs::Scenario s = cs::load_scenario(i.file.string(), {});
  EXPECT_EQ(training(s).parallel.tp, 8); // [training] tensor_parallel_degree
  EXPECT_EQ(training(s).parallel.pp, 8); // [experimental] pipeline_parallel_degree
  EXPECT_EQ(training(s).batch.micro, 4);
  EXPECT_EQ(training(s).batch.global, 256); // 32 a rank on 8 data-parallel ranks
  EXPECT_EQ(training(s).parallel.stage_layers, (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  EXPECT_TRUE(training(s).framework.tp_comm_overlap); // [experimental] enable_async_tensor_parallel
  EXPECT_EQ(i.r.err.find("experimental.pipeline"), std::string::npos) << i.r.err;
  expect_same_run(s, cs::load_scenario(src("scenarios/reference/torchtitan-llama3-405b-3d.yaml"), {}));

  // Interleaved 1F1B: two stages a rank, the same 8 microbatches (named: the count changed in 2025).
  const auto looped = import_405b_with("\"1F1B\"", "\"Interleaved1F1B\"", "looped2024");
  ASSERT_EQ(looped.r.code, 0) << looped.r.err;
  const cs::Scenario l = cs::load_scenario(looped.file.string(), {});
  EXPECT_EQ(training(l).parallel.vpp, 2);
  EXPECT_EQ(training(l).batch.micro, 4);
  EXPECT_NE(looped.r.err.find("microbatches of a looped schedule (8 a step"), std::string::npos) << looped.r.err;
  expect_same_run(l, cs::load_scenario(src("scenarios/reference/torchtitan-llama3-405b-3d-interleaved.yaml"), {}));

  // A count given divides the local batch; split points give the stages.
  const auto counted = import_405b_with("pipeline_parallel_degree = 8\n",
                                        "pipeline_parallel_degree = 8\npipeline_parallel_microbatches = 16\n"
                                        "pipeline_parallel_split_points = [\"layers.8\", \"layers.24\", "
                                        "\"layers.40\", \"layers.56\", \"layers.72\", \"layers.88\", \"layers.104\"]\n",
                                        "counted2024");
  ASSERT_EQ(counted.r.code, 0) << counted.r.err;
  const cs::Scenario c = cs::load_scenario(counted.file.string(), {});
  EXPECT_EQ(training(c).batch.micro, 2);
  EXPECT_EQ(training(c).parallel.stage_layers, (std::vector<int>{8, 16, 16, 16, 16, 16, 16, 22}));
  EXPECT_FALSE(training(c).parallel.account_for_embedding);
}

// The 405B row's pipeline in torchtitan's newer layout ([parallelism], since 2025), with `extra` lines in that table.
Imported import_newer_405b(const std::string& extra, const std::string& name)
{
  const std::string text = "[model]\nname = \"llama3\"\nflavor = \"405B\"\n"
                           "[training]\nlocal_batch_size = 32\nseq_len = 8192\n"
                           "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 8\n"
                           "pipeline_parallel_degree = 8\n" +
                           extra;
  return import_file(cs::testing::write_temp(name + ".toml", text).string(), "--gpus 512 --device h100-96gb-500w");
}

TEST(Import, TorchtitanPipelinesOfTheNewerLayoutRunMicrobatchesOfOneAndWeighTheEnds)
{
  // From April 2025 ([parallelism]) torchtitan cuts the local batch into microbatches of
  // pipeline_parallel_microbatch_size (1 unless set), and splits the layers by weight, the embedding and the output
  // layer one layer each unless set, the first stages taking the remainder; a looped schedule holds two stages a rank
  // unless pipeline_parallel_layers_per_stage sets the count. The 405B's 126 layers and two ends: 128 effective.
  const auto run = [](const std::string& extra, const std::string& name) {
    const auto i = import_newer_405b(extra, name);
    EXPECT_EQ(i.r.code, 0) << name << ": " << i.r.err;
    return cs::load_scenario(i.file.string(), {});
  };
  const cs::Scenario plain = run("", "newer");
  EXPECT_EQ(training(plain).batch.micro, 1);
  EXPECT_EQ(training(plain).batch.global, 256);
  EXPECT_EQ(training(plain).parallel.stage_layers, (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  const cs::Scenario looped =
      run("pipeline_parallel_microbatch_size = 2\npipeline_parallel_schedule = \"Interleaved1F1B\"\n", "newer_looped");
  EXPECT_EQ(training(looped).batch.micro, 2);
  EXPECT_EQ(training(looped).parallel.vpp, 2);
  EXPECT_EQ(training(looped).parallel.stage_layers.size(), 16u); // 8 effective layers each: 7, fourteen of 8, 7
  EXPECT_EQ(training(looped).parallel.stage_layers.front(), 7);
  // 5 layers a stage: 26 stages of 128 effective (ceil), which 8 ranks cannot share; 4: 32 stages, 4 a rank.
  const cs::Scenario four = run("pipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                                "pipeline_parallel_layers_per_stage = 4\n",
                                "newer_four");
  EXPECT_EQ(training(four).parallel.vpp, 4);
  EXPECT_EQ(training(four).parallel.stage_layers.size(), 32u);
  EXPECT_EQ(training(four).parallel.stage_layers.front(), 3);
  EXPECT_EQ(training(four).parallel.stage_layers[1], 4);
  // Ends that weigh nothing, and the remainder to the first stages: 126 over 8 is 16 (six of them) and 15.
  const cs::Scenario light = run("pipeline_parallel_first_stage_less_layers = 0\n"
                                 "pipeline_parallel_last_stage_less_layers = 0\n",
                                 "newer_light");
  EXPECT_EQ(training(light).parallel.stage_layers, (std::vector<int>{16, 16, 16, 16, 16, 16, 15, 15}));
  const auto bad = import_newer_405b("pipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                                     "pipeline_parallel_layers_per_stage = 5\n",
                                     "newer_five");
  EXPECT_EQ(bad.r.code, 2);
  EXPECT_NE(bad.r.err.find("5 layers a stage make 26 stages of 128 effective layers"), std::string::npos) << bad.r.err;
  EXPECT_FALSE(std::filesystem::exists(bad.file));
}

TEST(Import, TorchtitanPipelineSplitsThatCannotRunAreRefused)
{
  const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> cases{
      {{"pipeline_parallel_degree = 8\n", "pipeline_parallel_degree = 8\npipeline_parallel_microbatches = 5\n"},
       "the local batch of 32 does not split into 5 microbatches"},
      {{"pipeline_parallel_degree = 8\n",
        "pipeline_parallel_degree = 8\npipeline_parallel_split_points = [\"layers.8\", \"layer.9\"]\n"},
       "a split point is \"layers.N\", N rising from 1 to 125 (the model's last layer), not 'layer.9'"},
      {{"pipeline_parallel_degree = 8\n",
        "pipeline_parallel_degree = 8\npipeline_parallel_split_points = [\"layers.20\", \"layers.10\"]\n"},
       "not 'layers.10'"},
      {{"pipeline_parallel_degree = 8\n",
        "pipeline_parallel_degree = 8\npipeline_parallel_split_points = [\"layers.8\"]\n"},
       "1 split points make 2 stages: one a rank on 8 pipeline ranks (1F1B)"},
      {{"batch_size = 32\n", ""}, "[training] batch_size (local_batch_size) is needed to cut it into microbatches"}};
  int n = 0;
  for (const auto& [edit, message] : cases) {
    const auto bad = import_405b_with(edit.first, edit.second, "bad_split" + std::to_string(n++));
    EXPECT_EQ(bad.r.code, 2) << message;
    EXPECT_NE(bad.r.err.find(message), std::string::npos) << bad.r.err;
    EXPECT_TRUE(std::regex_search(bad.r.err, std::regex(R"(\.toml:[0-9]+:[0-9]+: )"))) << bad.r.err;
    EXPECT_FALSE(std::filesystem::exists(bad.file));
  }
}

TEST(Import, TorchtitanFsdpReshardingUnderAPipeline)
{
  // fsdp_reshard_after_forward "default" keeps a pipelined stage gathered for the step, as the fsdp profile does;
  // "always" gathers every microbatch (named as approximated); anything else is refused at its position.
  const auto with = [&](const std::string& value) {
    return import_newer_405b("fsdp_reshard_after_forward = \"" + value + "\"\n", "reshard_" + value);
  };
  const auto kept = with("default");
  ASSERT_EQ(kept.r.code, 0) << kept.r.err;
  EXPECT_TRUE(training(cs::load_scenario(kept.file.string(), {})).framework.pipeline_keeps_unsharded);
  const auto always = with("always");
  ASSERT_EQ(always.r.code, 0) << always.r.err;
  EXPECT_FALSE(training(cs::load_scenario(always.file.string(), {})).framework.pipeline_keeps_unsharded);
  EXPECT_NE(always.r.err.find("fsdp_reshard_after_forward = \"always\" with a pipeline"), std::string::npos)
      << always.r.err;
  const auto bad = with("sometimes");
  EXPECT_EQ(bad.r.code, 2);
  EXPECT_NE(bad.r.err.find("fsdp_reshard_after_forward is default, always or never, not 'sometimes'"),
            std::string::npos)
      << bad.r.err;
  EXPECT_FALSE(std::filesystem::exists(bad.file));
}

TEST(Import, TorchtitanContextParallelismExchangesKeysAsItsRotateMethodSays)
{
  // torchtitan's default all-gathers the key and value shards; alltoall passes them round the ring (p2p here).
  const std::string base = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nseq_len = 65536\n"
                           "local_batch_size = 1\n[parallelism]\ncontext_parallel_degree = 2\n";
  const std::vector<std::pair<std::string, cs::CpComm>> cases{
      {"", cs::CpComm::ALLGATHER},
      {"context_parallel_rotate_method = \"allgather\"\n", cs::CpComm::ALLGATHER},
      {"context_parallel_rotate_method = \"alltoall\"\n", cs::CpComm::P2P}};
  int n = 0;
  for (const auto& [line, comm] : cases) {
    const auto input = cs::testing::write_temp("rotate" + std::to_string(n++) + ".toml", base + line);
    const auto i = import_file(input.string(), "--gpus 8");
    ASSERT_EQ(i.r.code, 0) << i.r.err;
    EXPECT_EQ(i.r.err.find("context_parallel_rotate_method"), std::string::npos) << i.r.err; // modelled, not named
    const cs::Scenario s = cs::load_scenario(i.file.string(), {});
    EXPECT_EQ(training(s).parallel.cp, 2);
    EXPECT_EQ(training(s).parallel.cp_comm, comm) << line;
  }
}

TEST(Import, TorchtitanExpertParallelismReadsItsBackendAndExpertTensorDegree)
{
  // Qwen3-30B-A3B on 16 GPUs, TP 2, EP 8: torchtitan's experts are not tensor-parallel unless asked (etp 1, the TP
  // ranks joining the EP group), and its EP exchange is PyTorch's all-to-all unless DeepEP or HybridEP is named.
  const std::string base = "[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n[training]\nseq_len = 4096\n"
                           "local_batch_size = 1\n[parallelism]\ntensor_parallel_degree = 2\n"
                           "expert_parallel_degree = 8\n";
  struct Case {
    std::string lines, dispatcher;
    int etp;
  };
  const std::vector<Case> cases{{"", "alltoall", 1},
                                {"expert_parallel_comm_backend = \"standard\"\n", "alltoall", 1},
                                {"expert_parallel_comm_backend = \"deepep\"\n", "deepep", 1},
                                {"expert_parallel_comm_backend = \"hybridep\"\n", "hybridep", 1},
                                {"expert_tensor_parallel_degree = 2\n", "alltoall", 2}};
  int n = 0;
  for (const auto& c : cases) {
    const auto input = cs::testing::write_temp("ep" + std::to_string(n++) + ".toml", base + c.lines);
    const auto i = import_file(input.string(), "--gpus 16");
    ASSERT_EQ(i.r.code, 0) << c.lines << i.r.err;
    EXPECT_EQ(i.r.err.find("expert_"), std::string::npos) << i.r.err; // modelled, not named
    const cs::Scenario s = cs::load_scenario(i.file.string(), {});
    EXPECT_EQ(training(s).model.moe.dispatcher, c.dispatcher) << c.lines;
    EXPECT_EQ(training(s).parallel.etp, c.etp) << c.lines;
    EXPECT_EQ(training(s).parallel.ep, 8) << c.lines;
  }
  // On a dense model the degree and the backend do nothing, as in torchtitan, and the warning says so.
  const auto dense = cs::testing::write_temp(
      "dense-ep.toml", "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\n[parallelism]\n"
                       "expert_parallel_degree = 2\nexpert_parallel_comm_backend = \"deepep\"\n");
  const auto d = import_file(dense.string(), "--gpus 8");
  ASSERT_EQ(d.r.code, 0) << d.r.err;
  EXPECT_NE(d.r.err.find("read but not modelled (no effect on the simulated step): "
                         "parallelism.expert_parallel_degree (the model has no experts), "
                         "parallelism.expert_parallel_comm_backend (without experts and ep > 1)"),
            std::string::npos)
      << d.r.err;
  EXPECT_EQ(training(cs::load_scenario(d.file.string(), {})).parallel.ep, 1);
  // A backend torchtitan does not have, and an expert tensor degree it refuses: the value's position, nothing written.
  const std::vector<std::pair<std::string, std::string>> bad{
      {"expert_parallel_comm_backend = \"nccl\"\n",
       ":10:32: expert_parallel_comm_backend is standard, deepep or hybridep, not 'nccl'"},
      {"expert_tensor_parallel_degree = 4\n",
       ":10:33: expert_tensor_parallel_degree is 1 or the tensor-parallel degree (2), not 4"}};
  for (const auto& [line, message] : bad) {
    const auto input = cs::testing::write_temp("bad-ep" + std::to_string(n++) + ".toml", base + line);
    const auto i = import_file(input.string(), "--gpus 16");
    EXPECT_EQ(i.r.code, 2) << i.r.err;
    EXPECT_NE(i.r.err.find(message), std::string::npos) << i.r.err;
    EXPECT_FALSE(std::filesystem::exists(i.file));
  }
}

TEST(Import, DeepSeekArgumentsCarryMlaMoeAndMtp)
{
  const auto args = cs::testing::write_temp(
      "ds.args", "--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 "
                 "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 "
                 "--qk-pos-emb-head-dim 64 --v-head-dim 128 --num-experts 256 --moe-router-topk 8 "
                 "--moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 "
                 "--moe-layer-freq ([0]*3+[1]*58) --mtp-num-layers 1 --moe-grouped-gemm --seq-length 4096 "
                 "--padded-vocab-size 129280 --swiglu --normalization RMSNorm --bf16 --disable-bias-linear "
                 "--untie-embeddings-and-output-weights --pipeline-model-parallel-size 16 "
                 "--decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 1 "
                 "--expert-model-parallel-size 64 --micro-batch-size 1 --global-batch-size 15360 "
                 "--moe-token-dispatcher-type flex");
  const auto i = import_file(args.string(), "--gpus 2048");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const cs::Scenario s = cs::load_scenario(i.file.string(), {});
  const auto& m = training(s).model;
  EXPECT_EQ(cs::attention_kind_of(m).name(), "mla");
  EXPECT_EQ(m.moe.experts, 256);
  EXPECT_EQ(m.moe.first_dense, 3);
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_EQ(m.mtp_depth, 1);
  // Megatron's uneven pipeline: 4 layers first, 1 last, 4 on each of the 14 between.
  const auto& stages = training(s).parallel.stage_layers;
  ASSERT_EQ(stages.size(), 16u);
  EXPECT_EQ(stages.front(), 4);
  EXPECT_EQ(stages.back(), 1);
  EXPECT_EQ(stages[7], 4);
  // The same shape as the preset: 671B parameters (the MTP module apart).
  cs::ModelParams without = m;
  without.mtp_depth = 0;
  EXPECT_NEAR(cs::total_parameters(without) / cs::total_parameters(cs::model_presets().at("deepseek-v3")), 1.0, 1e-9);
  EXPECT_EQ(m.moe.dispatcher, "deepep"); // flex's DeepEP backend
}

TEST(Import, BadInputIsRefusedWithItsPositionAndWritesNothing)
{
  struct Case {
    std::string name, text, options, where;
  };
  const Case cases[] = {
      {"bad.args", "--num-layers 32\n  --tensor-model-parallel-size four", "--gpus 8", ":2:32: --tensor-model"},
      {"neg.args", "--num-layers -2", "--gpus 8", ":1:14: --num-layers takes a positive"},
      {"choice.args", "--normalization BatchNorm", "--gpus 8", ":1:17: --normalization is one of"},
      {"nogpus.args", "--num-layers 2 --hidden-size 64 --num-attention-heads 4", "", "give --gpus"},
      {"quote.args", "--data-path \"/x", "--gpus 8", "unterminated quote"},
      {"freq.args", "--num-experts 8 --moe-layer-freq [1,0]", "--gpus 8", "--moe-layer-freq"},
      {"syntax.toml", "[model]\nname = \"llama3\"\nflavor = \n", "--gpus 8", ":3:"},
      {"flavor.toml", "[model]\nname = \"llama3\"\nflavor = \"13B\"\n", "--gpus 8", ":3:10: no preset"},
      {"degree.toml", "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = \"2\"\n",
       "--gpus 8", ":5:26:"},
      {"nodes.toml", "[model]\nname = \"llama3\"\nflavor = \"8B\"\n", "--gpus 12", "do not fill whole nodes"},
      {"rotate.toml",
       "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\ncontext_parallel_degree = 2\n"
       "context_parallel_rotate_method = \"ring\"\n",
       "--gpus 8", ":6:34: context_parallel_rotate_method is allgather or alltoall"},
      {"runs.args", "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --tensor-model-parallel-size 3",
       "--gpus 8", "does not run"},
      {"layout.args", "--num-layers 4 --pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et|(tt|L'",
       "--gpus 8", ":1:82: --pipeline-model-parallel-layout at character 4: '(' is never closed"},
      {"ranks.args", "--num-layers 4 --pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et|tt|tL'",
       "--gpus 8", "has 3 stages, not a multiple of the 2 pipeline ranks"}};
  for (const auto& c : cases) {
    const auto input = cs::testing::write_temp(c.name, c.text);
    const auto i = import_file(input.string(), c.options);
    EXPECT_EQ(i.r.code, 2) << c.name << ": " << i.r.err;
    EXPECT_NE(i.r.err.find(c.where), std::string::npos) << c.name << ": " << i.r.err;
    EXPECT_FALSE(std::filesystem::exists(i.file)) << c.name;
  }
}

TEST(Import, APipelineLayoutSetsTheVirtualStages)
{
  // Megatron-Core derives VPP from the layout: 32 stages over PP 16 are two a rank, interleaved.
  const auto args = cs::testing::write_temp(
      "layout.args", "--num-layers 61 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --bf16 "
                     "--mtp-num-layers 1 --micro-batch-size 1 --global-batch-size 256 --pipeline-model-parallel-size "
                     "16 --pipeline-model-parallel-layout \"Et*3|(tt|)*29,m|L\"");
  const auto i = import_file(args.string(), "--gpus 16");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const cs::Scenario s = cs::load_scenario(i.file.string(), {});
  const auto& p = training(s).parallel;
  EXPECT_EQ(p.vpp, 2);
  EXPECT_EQ(p.pipeline_layout, "Et*3|(tt|)*29,m|L");
  ASSERT_EQ(p.stage_layers.size(), 32u);
  EXPECT_EQ(p.stage_layers.front(), 3);
  EXPECT_EQ(p.stage_layers[30], 0);
}

TEST(Import, SlidingWindowFlagsGiveTheSlidingWindowAttention)
{
  // GPT-OSS's attention as Megatron-Bridge's provider sets it: a 128-key left window (Transformer Engine's (128,0): the
  // query and the 128 keys before it), every second layer full, a learned sink a head.
  const std::string dense = "--num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --bf16 --attention-backend fused ";
  auto imported = [&](const std::string& flags) {
    const auto i = import_args(dense + flags);
    std::ifstream in(i.file);
    return std::pair{std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), i.r.err};
  };
  const auto [yaml, err] = imported("--window-size '(128,0)' --window-attn-skip-freq 2 --softmax-type learnable");
  for (const char* key : {"sliding_window:", "window: 129", "full_every: 2", "sinks: true"})
    EXPECT_NE(yaml.find(key), std::string::npos) << key << "\n" << yaml;
  const auto [plain, plain_err] = imported("--softmax-type learnable");
  EXPECT_EQ(plain.find("sliding_window"), std::string::npos) << plain;
  EXPECT_NE(plain_err.find("--softmax-type learnable (attention sinks are priced with a sliding window only)"),
            std::string::npos)
      << plain_err;
  for (const auto& [flags, words] : std::vector<std::pair<std::string, std::string>>{
           {"--window-size '(128,64)'", "keys after the query (right > 0) are not modelled"},
           {"--window-size wide", "--window-size takes (left,right)"},
           {"--softmax-type sparse", "--softmax-type is one of vanilla, off-by-one, learnable, not 'sparse'"}}) {
    const auto bad = cs::testing::write_temp("window_bad.args", dense + flags);
    const auto i = import_file(bad.string(), "--gpus 8");
    EXPECT_EQ(i.r.code, 2) << flags;
    EXPECT_NE(i.r.err.find(words), std::string::npos) << i.r.err;
    EXPECT_FALSE(std::filesystem::exists(i.file));
  }
}

TEST(Import, TheLossFusionFlagsChooseItsKernels)
{
  // --cross-entropy-loss-fusion fuses the loss, with Megatron-Core's native kernels unless --cross-entropy-fusion-impl
  // says te; the implementation alone fuses nothing and is named as read but not modelled.
  const std::string dense = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --bf16 ";
  auto imported = [&](const std::string& flags) {
    const auto i = import_args(dense + flags);
    return std::pair{training(cs::load_scenario(i.file.string(), {})).framework.cross_entropy_fusion, i.r.err};
  };
  EXPECT_EQ(imported("").first, "none");
  EXPECT_EQ(imported("--cross-entropy-loss-fusion").first, "native");
  EXPECT_EQ(imported("--cross-entropy-fusion-impl te --cross-entropy-loss-fusion").first, "te");
  const auto [alone, warning] = imported("--cross-entropy-fusion-impl te");
  EXPECT_EQ(alone, "none");
  EXPECT_NE(warning.find("--cross-entropy-fusion-impl te (read only with --cross-entropy-loss-fusion)"),
            std::string::npos)
      << warning;
  const auto bad = cs::testing::write_temp("loss_bad.args", "--cross-entropy-fusion-impl triton");
  const auto i = import_file(bad.string(), "--gpus 8");
  EXPECT_EQ(i.r.code, 2);
  EXPECT_NE(i.r.err.find(":1:29: --cross-entropy-fusion-impl is one of native, te, not 'triton'"), std::string::npos)
      << i.r.err;
  EXPECT_FALSE(std::filesystem::exists(i.file));
}

TEST(Import, ThePrecisionAwareOptimizerFlagsSetItsDtypes)
{
  // Megatron-LM's --use-precision-aware-optimizer and its dtypes, and Megatron-Bridge's optimizer overrides (torch's
  // dtype names), give the same optimizer state; a dtype Megatron-LM does not take is refused at its position.
  const std::string dense = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --bf16 ";
  for (const std::string flags :
       {"--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --main-grads-dtype bf16",
        "optimizer.use_precision_aware_optimizer=true optimizer.exp_avg_dtype=torch.bfloat16 "
        "optimizer.exp_avg_sq_dtype=torch.bfloat16 optimizer.main_grads_dtype=torch.bfloat16"}) {
    const auto i = import_args(dense + flags);
    const cs::OptimizerPrecision p = training(cs::load_scenario(i.file.string(), {})).framework.optimizer_precision;
    EXPECT_TRUE(p.enabled) << flags;
    EXPECT_EQ(p.exp_avg, "bf16");
    EXPECT_EQ(p.exp_avg_sq, "bf16");
    EXPECT_EQ(p.main_grads, "bf16");
    EXPECT_EQ(p.main_params, "fp32");
    EXPECT_EQ(p.state_bytes("bf16", ""), 6);
  }
  const auto bad =
      cs::testing::write_temp("optimizer_bad.args", "--use-precision-aware-optimizer --exp-avg-dtype e5m2");
  const auto i = import_file(bad.string(), "--gpus 8");
  EXPECT_EQ(i.r.code, 2);
  EXPECT_NE(i.r.err.find(":1:49: --exp-avg-dtype is one of"), std::string::npos) << i.r.err;
  EXPECT_FALSE(std::filesystem::exists(i.file));
}

TEST(Import, Fp8ParameterGathersAreReadFromEachSource)
{
  // Megatron-LM's --fp8-param-gather, Megatron-Bridge's mixed_precision.fp8_param_gather and torchao's
  // enable_fsdp_float8_all_gather (with FSDP shards to gather) all keep the GEMM weights in FP8 and gather them so.
  const std::string dense = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --bf16 --fp8-format hybrid --fp8-recipe tensorwise ";
  for (const std::string flags : {"--fp8-param-gather", "mixed_precision.fp8_param_gather=true"}) {
    const auto i = import_args(dense + flags);
    EXPECT_TRUE(training(cs::load_scenario(i.file.string(), {})).framework.fp8_param_gather) << flags;
  }
  EXPECT_FALSE(training(cs::load_scenario(import_args(dense).file.string(), {})).framework.fp8_param_gather);
  const auto titan = import_file(data("torchtitan-llama3-405b.toml"), "--gpus 512 --device h100-96gb-500w");
  ASSERT_EQ(titan.r.code, 0) << titan.r.err;
  EXPECT_TRUE(training(cs::load_scenario(titan.file.string(), {})).framework.fp8_param_gather);
  EXPECT_EQ(titan.r.err.find("enable_fsdp_float8_all_gather"), std::string::npos) << titan.r.err;
  // Without FSDP shards, or with Float8 off, the switch is read and named as changing nothing.
  const auto unsharded =
      import_405b_with("data_parallel_shard_degree = -1", "data_parallel_shard_degree = 1", "noshard");
  EXPECT_NE(unsharded.r.err.find("enable_fsdp_float8_all_gather (no FSDP shards to gather)"), std::string::npos)
      << unsharded.r.err;
  const auto off = import_405b_with("enable_float8_linear = true", "enable_float8_linear = false", "nofloat8");
  ASSERT_EQ(off.r.code, 0) << off.r.err;
  EXPECT_FALSE(training(cs::load_scenario(off.file.string(), {})).model.fp8);
  EXPECT_NE(off.r.err.find("float8.enable_fsdp_float8_all_gather (Float8 training is off)"), std::string::npos)
      << off.r.err;
}

TEST(Import, SquaredReluIsTheMlpMegatronNamesSo)
{
  // Megatron-LM's --squared-relu (Nemotron-4's MLP): up projection, relu(x)^2, down projection; GeLU without it.
  const std::string dense = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --bf16";
  EXPECT_EQ(training(cs::load_scenario(import_args(dense + " --squared-relu").file.string(), {})).model.mlp,
            "squared-relu");
  EXPECT_EQ(training(cs::load_scenario(import_args(dense).file.string(), {})).model.mlp, "gelu");
}

TEST(Import, PositionEmbeddingFlagsChooseTheRotation)
{
  // Megatron's default is a learned table; rope (or its old switch) rotates the queries and keys, fused unless
  // --no-rope-fusion, which a Megatron-Bridge override spells apply_rope_fusion=false.
  const std::string dense = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --bf16 ";
  auto imported = [&](const std::string& flags) {
    const auto i = import_args(dense + flags);
    const cs::Scenario s = cs::load_scenario(i.file.string(), {}); // held: training() points into it
    const auto& t = training(s);
    return std::pair{t.model.position_embedding, t.framework.fused_rope};
  };
  EXPECT_EQ(imported("").first, cs::PositionEmbedding::LEARNED);
  EXPECT_EQ(imported("--position-embedding-type rope"), std::pair(cs::PositionEmbedding::ROPE, true));
  EXPECT_EQ(imported("--use-rotary-position-embeddings --no-rope-fusion"),
            std::pair(cs::PositionEmbedding::ROPE, false));
  EXPECT_EQ(imported("--position-embedding-type none").first, cs::PositionEmbedding::NONE);
  // The old --no-position-embedding drops only a learned table: beside the rotary switch it leaves rope.
  EXPECT_EQ(imported("--use-rotary-position-embeddings --no-position-embedding").first, cs::PositionEmbedding::ROPE);
  // YaRN rotates too, and Megatron-LM leaves every rotary variant but plain rope unfused.
  EXPECT_EQ(imported("--position-embedding-type yarn"), std::pair(cs::PositionEmbedding::ROPE, false));
  const auto overrides = cs::testing::write_temp(
      "rope.overrides", "model.num_layers=2 model.hidden_size=1024 model.num_attention_heads=16 model.seq_length=1024 "
                        "train.micro_batch_size=1 model.position_embedding_type=rope model.apply_rope_fusion=false\n");
  const auto i = import_file(overrides.string(), "--gpus 8");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  EXPECT_FALSE(training(cs::load_scenario(i.file.string(), {})).framework.fused_rope);
  const auto bad = cs::testing::write_temp("rope_bad.args", "--position-embedding-type sideways");
  const auto b = import_file(bad.string(), "--gpus 8");
  EXPECT_EQ(b.r.code, 2);
  EXPECT_NE(b.r.err.find(":1:27: --position-embedding-type is one of learned_absolute, mrope, none, rope, yarn, "
                         "not 'sideways'"),
            std::string::npos)
      << b.r.err;
  EXPECT_FALSE(std::filesystem::exists(b.file));
}

TEST(Import, TheUserbuffersConfigurationIsReadByTheNameItShipsUnder)
{
  // --tp-comm-overlap-cfg names a YAML of Transformer Engine's ub_cfgs, Megatron-Bridge's comm_overlap override a
  // configuration: one shipped under that name is read as it; another is named in a warning, TE's defaults standing.
  const std::string dense = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --bf16 --tensor-model-parallel-size 4 --tp-comm-overlap ";
  const auto known = import_args(dense + "--tp-comm-overlap-cfg /opt/ub/ub_cfg_h100_h8192_tp4_mbs1_seqlen4096.yaml");
  const auto overlap = training(cs::load_scenario(known.file.string(), {})).framework.tp_overlap;
  ASSERT_EQ(overlap.count("proj_fprop"), 1u);
  EXPECT_EQ(overlap.at("proj_fprop").num_sm, 24);
  EXPECT_TRUE(overlap.at("proj_fprop").set_sm_margin);
  EXPECT_EQ(overlap.at("qkv_dgrad").num_sm, 8);
  const auto other = import_args(dense + "--tp-comm-overlap-cfg my_overlap.yaml");
  EXPECT_NE(other.r.err.find("--tp-comm-overlap-cfg my_overlap.yaml (not a configuration the simulator ships"),
            std::string::npos)
      << other.r.err;
  EXPECT_EQ(training(cs::load_scenario(other.file.string(), {})).framework.tp_overlap.at("proj_fprop").num_sm, 16);
  const auto overrides = cs::testing::write_temp(
      "ub.overrides", "model.num_layers=2 model.hidden_size=1024 model.num_attention_heads=16 model.seq_length=1024 "
                      "train.micro_batch_size=1 model.tensor_model_parallel_size=4 model.tp_comm_overlap=true "
                      "comm_overlap.tp_comm_overlap_cfg=userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192\n");
  const auto i = import_file(overrides.string(), "--gpus 8");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const auto bridge = training(cs::load_scenario(i.file.string(), {})).framework.tp_overlap;
  // A file in Transformer Engine's ub_cfgs format (NeMo-Framework-Launcher's) beside the argument list is read; the
  // keys it does not model are named; a malformed one is refused at its own line and column.
  const auto dir = cs::testing::fresh_dir("import_ub_cfg");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "my_ub.yaml") << "qkv_dgrad:\n  method: bulk\n  num_sm: 8\n  cga_size: 2\n  set_sm_margin: 0\n"
                                       "proj_fprop:\n  method: pipeline\n  num_sm: 24\n  num_splits: 4\n"
                                       "  set_sm_margin: 1\n";
  std::ofstream(dir / "run.args") << dense << "--tp-comm-overlap-cfg my_ub.yaml\n";
  const auto file = import_file((dir / "run.args").string(), "--gpus 8");
  ASSERT_EQ(file.r.code, 0) << file.r.err;
  const auto read = training(cs::load_scenario(file.file.string(), {})).framework.tp_overlap;
  EXPECT_EQ(read.at("qkv_dgrad").num_sm, 8);
  EXPECT_FALSE(read.at("qkv_dgrad").set_sm_margin);
  EXPECT_EQ(read.at("proj_fprop").num_sm, 24);
  EXPECT_TRUE(read.at("proj_fprop").set_sm_margin);
  EXPECT_EQ(read.at("fc2_fprop").num_sm, 16); // not in the file: Transformer Engine's default
  EXPECT_NE(file.r.err.find("my_ub.yaml: cga_size, num_splits"), std::string::npos) << file.r.err;
  std::ofstream(dir / "bad_ub.yaml") << "proj_fprop:\n  method: ring\n";
  std::ofstream(dir / "bad.args") << dense << "--tp-comm-overlap-cfg bad_ub.yaml\n";
  const auto bad = import_file((dir / "bad.args").string(), "--gpus 8");
  EXPECT_EQ(bad.r.code, 2);
  EXPECT_NE(bad.r.err.find("bad_ub.yaml:2:11: method is one of ring_exchange, pipeline, bulk, not 'ring'"),
            std::string::npos)
      << bad.r.err;
  EXPECT_FALSE(std::filesystem::exists(bad.file));
  // CUDA graphs are read and named: they cut host launch costs, which are not modelled.
  const auto graphs = import_args(dense + "--cuda-graph-impl transformer_engine --cuda-graph-modules attn moe_router");
  EXPECT_NE(graphs.r.err.find("--cuda-graph-impl transformer_engine (CUDA graphs cut the host's kernel launches"),
            std::string::npos)
      << graphs.r.err;
  EXPECT_NE(graphs.r.err.find("--cuda-graph-modules attn moe_router (CUDA graphs"), std::string::npos) << graphs.r.err;
  EXPECT_EQ(graphs.r.err.find("not known to the importer"), std::string::npos) << graphs.r.err;
  EXPECT_EQ(bridge.at("proj_fprop").method, "ring_exchange");
  EXPECT_EQ(bridge.at("qkv_wgrad").num_sm, 24);
}

TEST(Import, MegatronsRankOrderIsThePipelineOutermostUnlessAskedOtherwise)
{
  // Megatron-Core orders ranks tp-cp-ep-dp-pp; --use-tp-pp-dp-mapping puts a replica's stages next to its TP ranks.
  const std::string dense = "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --pipeline-model-parallel-size 2 --bf16 ";
  for (const auto& [flag, order] : {std::pair<std::string, cs::Placement>{"", cs::Placement::TP_DP_PP},
                                    {"--use-tp-pp-dp-mapping", cs::Placement::TP_PP_DP}}) {
    const auto args = cs::testing::write_temp("order.args", dense + flag);
    const auto i = import_file(args.string(), "--gpus 8");
    ASSERT_EQ(i.r.code, 0) << flag << ": " << i.r.err;
    EXPECT_EQ(i.r.err.find("use-tp-pp-dp-mapping"), std::string::npos) << i.r.err; // modelled, not named
    EXPECT_EQ(training(cs::load_scenario(i.file.string(), {})).parallel.placement, order) << flag;
  }
}

TEST(Import, MoeDispatcherFlagsChooseTheDispatcher)
{
  const std::string moe = "--num-layers 4 --hidden-size 1024 --ffn-hidden-size 4096 --num-attention-heads 16 "
                          "--num-experts 16 --moe-router-topk 4 --expert-model-parallel-size 16 --seq-length 1024 "
                          "--micro-batch-size 1 --bf16 ";
  auto dispatcher = [&](const std::string& flags) {
    const auto args = cs::testing::write_temp("dispatch.args", moe + flags);
    const auto i = import_file(args.string(), "--gpus 16");
    EXPECT_EQ(i.r.code, 0) << flags << ": " << i.r.err;
    return training(cs::load_scenario(i.file.string(), {})).model.moe;
  };
  EXPECT_EQ(dispatcher("").dispatcher, "allgather"); // Megatron's default moe_token_dispatcher_type
  EXPECT_EQ(dispatcher("--moe-token-dispatcher-type alltoall").dispatcher, "alltoall");
  EXPECT_EQ(dispatcher("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep").dispatcher, "deepep");
  EXPECT_EQ(dispatcher("--moe-token-dispatcher-type flex").dispatcher, "deepep"); // the flex backend's default
  EXPECT_EQ(dispatcher("--moe-flex-dispatcher-backend hybridep --moe-token-dispatcher-type flex").dispatcher,
            "hybridep"); // in either order
  // The backend counts only with the flex type (the GPT-OSS recipes set alltoall with a deepep backend).
  EXPECT_EQ(dispatcher("--moe-token-dispatcher-type alltoall --moe-flex-dispatcher-backend deepep").dispatcher,
            "alltoall");
  EXPECT_EQ(dispatcher("--moe-enable-deepep").dispatcher, "deepep");
  EXPECT_EQ(dispatcher("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "
                       "--moe-hybridep-num-sms 32")
                .hybridep_sms,
            32);
  EXPECT_EQ(dispatcher("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep "
                       "--moe-flex-dispatcher-num-sms 24")
                .hybridep_sms,
            24);
  EXPECT_EQ(dispatcher("--moe-router-group-topk 2").max_nodes_per_token, 2);
  EXPECT_EQ(dispatcher("--moe-enable-deepep --moe-deepep-num-sms 24").deepep_sms, 24);
  const std::string a2a = "--moe-token-dispatcher-type alltoall "; // the overlaps need it (or flex), as in Megatron
  {
    const auto args = cs::testing::write_temp("overlap.args", moe + a2a + "--overlap-moe-expert-parallel-comm");
    const auto i = import_file(args.string(), "--gpus 16");
    EXPECT_EQ(i.r.code, 0) << i.r.err;
    EXPECT_TRUE(training(cs::load_scenario(i.file.string(), {})).framework.overlap_moe_expert_parallel_comm);
  }
  {
    const auto args = cs::testing::write_temp(
        "delay.args", moe + a2a +
                          "--overlap-moe-expert-parallel-comm --delay-wgrad-compute "
                          "--accumulate-allreduce-grads-in-fp32 --no-gradient-accumulation-fusion "
                          "--no-overlap-p2p-communication --no-async-tensor-model-parallel-allreduce");
    const auto i = import_file(args.string(), "--gpus 16");
    EXPECT_EQ(i.r.code, 0) << i.r.err;
    const auto fw = training(cs::load_scenario(i.file.string(), {})).framework;
    EXPECT_TRUE(fw.delay_wgrad_compute);
    EXPECT_FALSE(fw.overlap_p2p_comm);       // --no-overlap-p2p-communication
    EXPECT_EQ(fw.grad_accumulation, "fp32"); // fp32 main_grad, reduced in fp32
    EXPECT_EQ(fw.reduce_dtype, "fp32");
    EXPECT_FALSE(fw.gradient_accumulation_fusion);
    EXPECT_FALSE(fw.async_tensor_model_parallel_allreduce); // the backward's TP collectives block again
  }
  {
    const auto args = cs::testing::write_temp(
        "shared.args", moe + a2a + "--moe-shared-expert-intermediate-size 1024 --moe-shared-expert-overlap");
    const auto i = import_file(args.string(), "--gpus 16");
    EXPECT_EQ(i.r.code, 0) << i.r.err;
    EXPECT_TRUE(training(cs::load_scenario(i.file.string(), {})).framework.moe_shared_expert_overlap);
  }
  // A backend Megatron-Core has that is not priced here: refused at the value, nothing written.
  const auto bad = cs::testing::write_temp("nccl.args", "--moe-flex-dispatcher-backend ncclep");
  const auto i = import_file(bad.string(), "--gpus 16");
  EXPECT_EQ(i.r.code, 2) << i.r.err;
  EXPECT_NE(i.r.err.find(":1:31: --moe-flex-dispatcher-backend is one of deepep, hybridep, not 'ncclep'"),
            std::string::npos)
      << i.r.err;
  EXPECT_FALSE(std::filesystem::exists(i.file));
}

TEST(Import, ReplicatedShardsAreReadFromEachSource)
{
  // HSDP: torchtitan's data_parallel_replicate_degree beside a shard degree other than 1, Megatron-LM's
  // --num-distributed-optimizer-instances and Megatron-Bridge's ddp.num_distributed_optimizer_instances.
  const auto hsdp =
      import_405b_with("data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 2", "hsdp");
  ASSERT_EQ(hsdp.r.code, 0) << hsdp.r.err;
  const auto titan = training(cs::load_scenario(hsdp.file.string(), {}));
  EXPECT_EQ(titan.parallel.dp_replicate, 2);
  EXPECT_EQ(titan.parallel.zero, 3);
  EXPECT_EQ(hsdp.r.err.find("data_parallel_replicate_degree"), std::string::npos) << hsdp.r.err;
  // A shard degree of 1 replicates whole: plain data parallelism.
  const auto ddp = import_405b_with("data_parallel_replicate_degree = 1\ndata_parallel_shard_degree = -1",
                                    "data_parallel_replicate_degree = 8\ndata_parallel_shard_degree = 1", "ddp");
  ASSERT_EQ(ddp.r.code, 0) << ddp.r.err;
  EXPECT_EQ(training(cs::load_scenario(ddp.file.string(), {})).parallel.dp_replicate, 1);
  EXPECT_EQ(training(cs::load_scenario(ddp.file.string(), {})).parallel.zero, 0);
  const std::string dense = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --global-batch-size 64 --bf16 ";
  for (const std::string flags : {"--use-distributed-optimizer --num-distributed-optimizer-instances 2",
                                  "ddp.use_distributed_optimizer=true ddp.num_distributed_optimizer_instances=2"}) {
    const auto i = import_args(dense + flags);
    ASSERT_EQ(i.r.code, 0) << i.r.err;
    const auto t = training(cs::load_scenario(i.file.string(), {}));
    EXPECT_EQ(t.parallel.dp_replicate, 2) << flags;
    EXPECT_EQ(t.parallel.zero, 1) << flags;
  }
}

TEST(Import, MegatronShardedDataParallelismIsReadAsItsZeroStage)
{
  // --use-torch-fsdp2 shards parameters, gradients and optimizer state (ZeRO-3); Megatron-FSDP shards by its strategy,
  // and its outer no_shard replicates the shards over the distributed-optimizer instances (HSDP).
  const std::string dense = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                            "--micro-batch-size 1 --global-batch-size 64 --bf16 ";
  const std::vector<std::tuple<std::string, int, int>> cases{
      {"--use-torch-fsdp2", 3, 1},
      {"--use-megatron-fsdp", 0, 1},
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads", 2, 1},
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params --outer-dp-sharding-strategy "
       "no_shard --num-distributed-optimizer-instances 2",
       3, 2},
      {"ddp.use_megatron_fsdp=true ddp.data_parallel_sharding_strategy=optim", 1, 1}};
  for (const auto& [flags, zero, replicate] : cases) {
    const auto i = import_args(dense + flags);
    ASSERT_EQ(i.r.code, 0) << i.r.err;
    const auto t = training(cs::load_scenario(i.file.string(), {}));
    EXPECT_EQ(t.parallel.zero, zero) << flags;
    EXPECT_EQ(t.parallel.dp_replicate, replicate) << flags;
    for (const char* read : {"use-torch-fsdp2", "use-megatron-fsdp", "sharding-strategy"})
      EXPECT_EQ(i.r.err.find(read), std::string::npos) << flags << ": " << i.r.err;
  }
  // A strategy without Megatron-FSDP is named as read without effect; an outer strategy that shards is not modelled.
  const auto alone = import_args(dense + "--data-parallel-sharding-strategy optim");
  EXPECT_NE(alone.r.err.find("(read only with --use-megatron-fsdp)"), std::string::npos) << alone.r.err;
  const auto outer = import_args(dense + "--use-megatron-fsdp --outer-dp-sharding-strategy optim");
  EXPECT_NE(outer.r.err.find("--outer-dp-sharding-strategy optim"), std::string::npos) << outer.r.err;
  // An unknown strategy exits 2 at its position, nothing written.
  const auto file = cs::testing::write_temp("bad_strategy.args", dense + "--use-megatron-fsdp "
                                                                         "--data-parallel-sharding-strategy full");
  const auto bad = import_file(file.string(), "--gpus 8");
  EXPECT_EQ(bad.r.code, 2);
  EXPECT_NE(bad.r.err.find("--data-parallel-sharding-strategy is one of"), std::string::npos) << bad.r.err;
  EXPECT_TRUE(std::regex_search(bad.r.err, std::regex(R"(\.args:1:[0-9]+: )"))) << bad.r.err;
  EXPECT_FALSE(std::filesystem::exists(bad.file));
}
