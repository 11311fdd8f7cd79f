// clustersim import of a Hugging Face config.json: the published models' configurations read into the same shapes as
// the presets, the run's defaults said, what is not modelled named, and bad input refused where it is.
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/transformer.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/cli/import_run.hpp"
#include "tests/test_support.hpp"
#include "workloads/training/training_workload.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace {

using cs::testing::clustersim;

cs::testing::ImportResult import_hf(const std::string& input, const std::string& options = "--gpus 8")
{
  return cs::testing::import_file(input, options);
}

const cs::ModelParams& model_of(const cs::Scenario& s) { return cs::workload_as<cs::TrainingWorkload>(s).params.model; }

} // namespace

TEST(ImportHf, PublishedConfigsReadAsThePresetsShapes)
{
  // The configs as published on the Hugging Face Hub: each imports to the preset's shape, so to its parameters.
  const std::pair<const char*, const char*> rows[] = {{"llama3-8b", "llama3-8b"},
                                                      {"qwen3-30b-a3b", "qwen3-30b-a3b"},
                                                      {"mixtral-8x7b", "mixtral-8x7b"},
                                                      {"deepseek-v3", "deepseek-v3"}};
  for (const auto& [file, preset] : rows) {
    const auto i = import_hf(cs::testing::src(std::string("tests/data/import/hf/") + file + ".config.json"));
    ASSERT_EQ(i.r.code, 0) << file << ": " << i.r.err;
    const cs::Scenario scenario = cs::load_scenario(i.file.string(), {});
    const cs::ModelParams& m = model_of(scenario);
    cs::ModelParams p = cs::model_presets().at(preset);
    if (std::string(preset) == "deepseek-v3") // its config has the MTP module the preset leaves to mtp_depth
      p.mtp_depth = 1;
    EXPECT_DOUBLE_EQ(cs::total_parameters(m), cs::total_parameters(p)) << file;
    EXPECT_EQ(m.layers, p.layers) << file;
    EXPECT_EQ(m.kv(), p.kv()) << file;
    EXPECT_EQ(m.qk_norm, p.qk_norm) << file;
    EXPECT_EQ(m.position_embedding, cs::PositionEmbedding::ROPE) << file;
    EXPECT_EQ(m.moe.experts, p.moe.experts) << file;
    EXPECT_EQ(m.moe.top_k, p.moe.top_k) << file;
    EXPECT_EQ(m.moe.first_dense, p.moe.first_dense) << file;
    EXPECT_EQ(m.mtp_depth, p.mtp_depth) << file;
    EXPECT_EQ(m.seq, 4096) << file;
    // The run is not in a model configuration, and the defaults it gets are said.
    EXPECT_NE(i.r.err.find("a model configuration carries no run"), std::string::npos) << i.r.err;
    EXPECT_EQ(i.r.err.find("not known to the importer"), std::string::npos) << file << ": " << i.r.err;
  }
}

TEST(ImportHf, NemotronReadsAsSquaredReluWithLayerNorms)
{
  // transformers' NemotronConfig with Nemotron-4 15B's shape (its technical report, section 2; the file is written in
  // the config's keys, no such checkpoint being published): squared ReLU without a gate, LayerNorms, 8 key/value
  // heads, 256,000 tokens, untied; half of each head rotated, which is named as priced whole.
  const auto i = import_hf(cs::testing::src("tests/data/import/hf/nemotron4-15b.config.json"));
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const cs::Scenario scenario = cs::load_scenario(i.file.string(), {});
  const cs::ModelParams& m = model_of(scenario);
  const cs::ModelParams& p = cs::model_presets().at("nemotron4-15b");
  EXPECT_EQ(m.mlp, "squared-relu");
  EXPECT_EQ(m.norm, cs::Norm::LAYERNORM);
  EXPECT_DOUBLE_EQ(cs::total_parameters(m), cs::total_parameters(p));
  EXPECT_NE(i.r.err.find("partial_rotary_factor (the rotation priced over whole heads)"), std::string::npos) << i.r.err;
  EXPECT_EQ(i.r.err.find("hidden_act"), std::string::npos) << i.r.err;
  EXPECT_EQ(i.r.err.find("not known to the importer"), std::string::npos) << i.r.err;
}

TEST(ImportHf, NemotronsKvChannelsIsItsHeadWidth)
{
  // Minitron 8B's shape as NemotronConfig once spelt it: 48 heads of kv_channels 128 over a 4,096 hidden, so the
  // queries are 6,144 wide; without the key the heads would be 4,096 / 48 wide and the attention a third smaller.
  const std::string text = R"({"model_type": "nemotron", "hidden_act": "relu2", "hidden_size": 4096,
    "intermediate_size": 16384, "num_attention_heads": 48, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "kv_channels": 128, "vocab_size": 256000, "max_position_embeddings": 4096})";
  const auto i = import_hf(cs::testing::write_temp("minitron.config.json", text).string());
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const cs::Scenario scenario = cs::load_scenario(i.file.string(), {});
  EXPECT_EQ(model_of(scenario).head_dim, 128);
  EXPECT_EQ(i.r.err.find("kv_channels"), std::string::npos) << i.r.err;
}

TEST(ImportHf, GptOssReadsAsTheMegatronBridgeRowsModel)
{
  // GPT-OSS-120B's config: every other layer a 128-token window with a learned sink a head, biases, YaRN rotation
  // (unfused, as Megatron leaves every rotary variant but plain rope), 128 experts top-4. The Megatron-Bridge row's
  // hand-written model has the same parameters (its window is Megatron's (128, 0): 129 keys with the query's own).
  const auto i = import_hf(cs::testing::src("tests/data/import/hf/gpt-oss-120b.config.json"), "--gpus 64");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  EXPECT_EQ(i.r.err.find("not known to the importer"), std::string::npos) << i.r.err;
  const cs::Scenario imported = cs::load_scenario(i.file.string(), {});
  const cs::Scenario row = cs::load_scenario(cs::testing::src("scenarios/reference/mbridge-gpt-oss-120b.yaml"), {});
  EXPECT_DOUBLE_EQ(cs::total_parameters(model_of(imported)), cs::total_parameters(model_of(row)));
  EXPECT_EQ(cs::attention_kind_of(model_of(imported)).name(), "sliding_window");
  EXPECT_TRUE(model_of(imported).bias);
  EXPECT_FALSE(cs::workload_as<cs::TrainingWorkload>(imported).params.framework.fused_rope);
}

TEST(ImportHf, WhatItDoesNotModelIsNamed)
{
  const auto v3 = import_hf(cs::testing::src("tests/data/import/hf/deepseek-v3.config.json"));
  ASSERT_EQ(v3.r.code, 0) << v3.r.err;
  EXPECT_NE(v3.r.err.find("quantization_config (how the checkpoint is stored"), std::string::npos) << v3.r.err;
  EXPECT_NE(v3.r.err.find("max_nodes_per_token"), std::string::npos) << v3.r.err;
  const auto odd = cs::testing::write_temp(
      "odd.json", R"({"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 512, "intermediate_size": 1024,
"num_attention_heads": 8, "vocab_size": 1000, "hidden_act": "gelu", "frobnicate": 3, "use_sliding_window": true,
"sliding_window": 128, "max_position_embeddings": 2048})");
  const auto i = import_hf(odd.string());
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  for (const char* said : {"hidden_act gelu (priced as SwiGLU's SiLU)", "QKV biases", "use_sliding_window",
                           "not known to the importer, so not modelled: frobnicate", "2048 tokens assumed"})
    EXPECT_NE(i.r.err.find(said), std::string::npos) << said << "\n" << i.r.err;
  const cs::Scenario scenario = cs::load_scenario(i.file.string(), {});
  EXPECT_EQ(model_of(scenario).seq, 2048); // the model's whole context, shorter
}

TEST(ImportHf, BadInputIsRefusedWithItsPositionAndWritesNothing)
{
  const std::string base = R"("num_hidden_layers": 2, "hidden_size": 512, "intermediate_size": 1024, )"
                           R"("num_attention_heads": 8, "vocab_size": 1000)";
  struct Case {
    std::string name, text, where;
  };
  const Case cases[] = {
      {"syntax.json", "{\"model_type\": \"llama\",\n  \"hidden_size\": }", ":2:18:"},
      {"family.json", "{\"model_type\": \"gemma\", " + base + "}", ":1:2: at /model_type: 'gemma' is not a model_type"},
      {"layers.json", "{\"model_type\": \"llama\",\n \"num_hidden_layers\": 2.5, \"hidden_size\": 512}",
       ":2:2: at /num_hidden_layers: must be a whole number"},
      {"missing.json", "{\"model_type\": \"llama\", \"hidden_size\": 512}", "missing key 'num_hidden_layers'"},
      {"tie.json", "{\"model_type\": \"llama\", " + base + ", \"tie_word_embeddings\": \"no\"}",
       "at /tie_word_embeddings: expected true or false"},
      {"moe.json", "{\"model_type\": \"mixtral\", " + base + "}", "missing key 'num_local_experts'"},
      {"array.json", "[1, 2]", "one JSON object"}};
  for (const auto& c : cases) {
    const auto input = cs::testing::write_temp(c.name, c.text);
    const auto i = import_hf(input.string(), "--gpus 8 --format hf");
    EXPECT_EQ(i.r.code, 2) << c.name << ": " << i.r.err;
    EXPECT_NE(i.r.err.find(c.where), std::string::npos) << c.name << ": " << i.r.err;
    EXPECT_FALSE(std::filesystem::exists(i.file)) << c.name;
  }
}
