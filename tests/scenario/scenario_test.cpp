#include "models/transformer/model_params.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/scenario/scenario.hpp"
#include "workloads/training/training_workload.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace {

const char* kValid = R"(name: t
cluster:
  device: h100-sxm5
  nodes: 2
  gpus_per_node: 8
  network: {kind: fat-tree, nic_bandwidth: 400Gb/s, nics_per_node: 8}
workload:
  kind: transformer-training
  model: {layers: 2, hidden: 256, heads: 4, seq: 128, vocab: 1000}
  batch: {global: 32, micro: 2}
policies: {sync: ring-allreduce}
)";

std::string write_temp(const std::string& text)
{
  static int counter = 0;
  auto path = std::filesystem::temp_directory_path() /
              ("cs_scenario_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".yaml");
  std::ofstream(path) << text;
  return path.string();
}

// Loads and checks; returns the error's "file:line:col: message" with the temp path replaced by "F".
std::string error_of(const std::string& text, const std::vector<std::string>& sets = {})
{
  std::string path = write_temp(text);
  try {
    cs::Scenario s = cs::load_scenario(path, sets);
    cs::check_scenario(s);
  } catch (const cs::InputError& e) {
    std::string w = e.where();
    if (w.rfind(path, 0) == 0)
      w = "F" + w.substr(path.size());
    return w;
  }
  return "";
}

} // namespace

TEST(Scenario, ValidScenarioLoadsWithDefaults)
{
  cs::Scenario s = cs::load_scenario(write_temp(kValid));
  cs::check_scenario(s);
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.backend, cs::Backend::SIMGRID);
  EXPECT_EQ(s.cluster.gpus, 16);
  EXPECT_DOUBLE_EQ(s.cluster.network.nic_bandwidth.value, 50e9);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.ffn, 1024); // 4 x hidden by default
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.dtype, "bf16");
}

TEST(Scenario, SetOverridesAnyKeyAndCreatesMaps)
{
  cs::Scenario s = cs::load_scenario(write_temp(kValid), {"cluster.nodes=4", "workload.model.dtype=fp16",
                                                          "cluster.intra_node.latency=2us", "backend=analytical"});
  EXPECT_EQ(s.cluster.nodes, 4);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.dtype, "fp16");
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.latency.value, 2e-6);
  EXPECT_EQ(s.backend, cs::Backend::ANALYTICAL);
}

TEST(Scenario, MissingFile)
{
  try {
    cs::load_scenario("/nonexistent/x.yaml");
    FAIL();
  } catch (const cs::InputError& e) {
    EXPECT_EQ(e.where(), "/nonexistent/x.yaml:0:0: cannot open scenario file: no such file");
  }
}

TEST(Scenario, YamlSyntaxErrorHasPosition)
{
  EXPECT_EQ(error_of("name: t\ncluster: {nodes: 2\n"), "F:3:1: YAML syntax error: end of map flow not found");
}

TEST(Scenario, AmbiguousYamlIsRefused)
{
  // yaml-cpp would keep the first of two keys, read only the first document, and take our own tags.
  EXPECT_EQ(error_of("name: a\nname: b\n"), "F:2:1: key 'name' appears twice in this map (first at line 1)");
  EXPECT_EQ(error_of("name: a\n---\nname: b\n").substr(0, 30), "F:2:1: a second YAML document:");
  // yaml-cpp's LoadAll looped forever on this (fuzz_scenario found it): now one parser step at a time.
  EXPECT_EQ(error_of(",\n# x\nname: y\n").substr(0, 30), "F:1:1: a second YAML document:");
  EXPECT_EQ(error_of("name: !cs-set-99 a\n"), "F:1:7: tag '!cs-set-99' is reserved for --set overrides");
  EXPECT_EQ(error_of("? [a, b]\n: 1\nname: x\n"), "F:1:3: a map key must be a plain name, not a list or a map");
  // Ten levels of ten aliases: 10^7 nodes from a few lines.
  std::string laugh = "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i < 8; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    laugh += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k)
      laugh += ", " + prev;
    laugh += "]\n";
  }
  EXPECT_NE(error_of(laugh).find("more than a million nodes"), std::string::npos);
}

TEST(Scenario, UnknownKeySuggestsTheClosest)
{
  std::string e = error_of(std::string(kValid) + "bakend: simgrid\n");
  EXPECT_EQ(e, "F:12:1: unknown key 'bakend' at the top level (did you mean 'backend'?)");
  e = error_of(std::string(kValid).replace(std::string(kValid).find("gpus_per_node"), 13, "gpu_per_node"));
  EXPECT_EQ(e, "F:5:3: unknown key 'gpu_per_node' in 'cluster' (did you mean 'gpus_per_node'?)");
  // A key an override misspells is blamed on that override, not on a position in the file.
  e = error_of(kValid, {"cluster.nodes=2", "cluster.gpu_per_node=4"});
  EXPECT_EQ(e, "--set:1:2: cluster.gpu_per_node=4: unknown key 'gpu_per_node' in 'cluster' (did you mean "
               "'gpus_per_node'?)");
  e = error_of(kValid, {"workload.paralel.tp=2"});
  EXPECT_EQ(e.rfind("--set:1:1: workload.paralel.tp=2: unknown key 'paralel' in 'workload'", 0), 0u) << e;
  // With nothing close, the known keys are listed once each (framework is read as a name or as a map).
  e = error_of(kValid, {"workload.policies.x=1"});
  EXPECT_NE(e.find("(known keys: kind, model, batch, parallel, framework, iterations"), std::string::npos) << e;
}

TEST(Scenario, WrongTypeNamesTheValue)
{
  std::string text = kValid;
  text.replace(text.find("nodes: 2"), 8, "nodes: two");
  EXPECT_EQ(error_of(text), "F:4:10: expected an integer, got 'two'");
  text = kValid;
  text.replace(text.find("400Gb/s"), 7, "fast");
  EXPECT_EQ(error_of(text), "F:6:44: expected a number with a unit, got 'fast'");
  text = kValid;
  text.replace(text.find("400Gb/s"), 7, "400Gb");
  EXPECT_EQ(error_of(text), "F:6:44: '400Gb' is not a rate: expected a unit such as B/s, GB/s, Gb/s or GiB/s");
}

TEST(Scenario, ZeroAndNegativeSizesAreRejected)
{
  EXPECT_EQ(error_of(kValid, {"cluster.network.nic_bandwidth=0Gb/s"}),
            "--set:1:1: cluster.network.nic_bandwidth=0Gb/s: 'cluster.network.nic_bandwidth' must be positive, got 0");
  EXPECT_EQ(error_of(kValid, {"cluster.nodes=-1"}),
            "--set:1:1: cluster.nodes=-1: 'cluster.nodes' must be positive, got -1");
  EXPECT_EQ(error_of(kValid, {"workload.gradient_bucket=-4MiB"}),
            "--set:1:1: workload.gradient_bucket=-4MiB: 'workload.gradient_bucket' must be positive, got -4194304");
}

TEST(Scenario, UnknownDeviceListsTheCatalog)
{
  std::string e = error_of(kValid, {"cluster.device=h1000"});
  EXPECT_EQ(
      e.rfind("--set:1:1: cluster.device=h1000: unknown device 'h1000' (clustersim list devices: a100-sxm4-40gb,", 0),
      0u)
      << e;
}

TEST(Scenario, UnknownPolicyListsValidNames)
{
  std::string text = kValid;
  text.replace(text.find("ring-allreduce"), 14, "ring-allreduse");
  EXPECT_EQ(error_of(text),
            "F:11:18: unknown sync policy 'ring-allreduse' (expected one of: nccl-allreduce, ring-allreduce)");
}

TEST(Scenario, ChoiceSuggestsTheClosest)
{
  EXPECT_EQ(error_of(kValid, {"backend=simgird"}),
            "--set:1:1: backend=simgird: 'simgird' is not a valid backend: expected one of simgrid | analytical "
            "(did you mean 'simgrid'?)");
}

TEST(Scenario, GroupLargerThanTheCluster)
{
  std::string text = std::string(kValid).replace(std::string(kValid).find("batch:"), 0, "parallel: {dp: 32}\n  ");
  EXPECT_EQ(error_of(text), "F:10:18: dp x tp x pp = 32 x 1 x 1 is larger than the cluster's 16 GPUs");
}

TEST(Scenario, GpusThatDoNotDivideIntoNodes)
{
  EXPECT_EQ(error_of(kValid, {"cluster.gpus=12"}),
            "--set:1:1: cluster.gpus=12: cluster.gpus = 12 does not divide into nodes of 8 GPUs");
  EXPECT_EQ(error_of(kValid, {"cluster.gpus=24"}),
            "--set:1:1: cluster.gpus=24: cluster.gpus = 24 but nodes x gpus_per_node = 16");
  std::string text = kValid;
  text.replace(text.find("  nodes: 2\n"), 11, "  gpus: 12\n");
  EXPECT_EQ(error_of(text), "F:4:9: cluster.gpus = 12 does not divide into nodes of 8 GPUs");
}

TEST(Scenario, BatchThatDoesNotDivide)
{
  EXPECT_EQ(
      error_of(kValid, {"workload.batch.global=40"}),
      "--set:1:1: workload.batch.global=40: global batch 40 does not divide into dp (16) x micro (2) = 32 per step");
}

TEST(Scenario, ParallelismTheModelCannotUseIsAClearError)
{
  EXPECT_EQ(error_of(kValid, {"workload.parallel.ep=2"}),
            "--set:1:1: workload.parallel.ep=2: expert parallelism needs an MoE model (workload.model.moe.experts)");
  // tp x pp that does not fit the cluster names the pipeline key
  EXPECT_NE(error_of(kValid, {"workload.parallel.tp=8", "workload.parallel.pp=4"}).find("workload.parallel"),
            std::string::npos);
}

TEST(Scenario, TensorParallelismStaysInsideANode)
{
  EXPECT_EQ(error_of(kValid, {"workload.parallel.tp=16"}), "--set:1:1: workload.parallel.tp=16: tp = 16 must divide a "
                                                           "node's 8 GPUs (tensor parallelism stays inside a node)");
  EXPECT_EQ(error_of(kValid, {"workload.parallel.tp=8"}),
            "--set:1:1: workload.parallel.tp=8: tp = 8 must divide the heads (4)");
  EXPECT_EQ(error_of(kValid, {"workload.parallel.tp=2"}), "");
  EXPECT_EQ(error_of(kValid, {"workload.parallel.tp=2", "workload.model.kv_heads=1"}),
            "--set:1:1: workload.parallel.tp=2: tp = 2 must divide the key/value heads (1)");
}

TEST(Scenario, MalformedSetOverride)
{
  EXPECT_EQ(error_of(kValid, {"cluster.nodes"}), "--set:1:1: 'cluster.nodes': expected key.path=value");
  EXPECT_EQ(error_of(kValid, {"name.x=1"}), "--set:1:1: 'name.x=1': 'name' is not a map, cannot set a key inside it");
  EXPECT_EQ(error_of(kValid, {"cluster.network.levels[7].radix=4"}),
            "--set:1:1: 'cluster.network.levels[7].radix=4': 'cluster.network.levels' has no element [7] (it has 2 "
            "elements)");
  EXPECT_EQ(error_of(kValid, {"cluster.nodes_list[0]=1"}),
            "--set:1:1: 'cluster.nodes_list[0]=1': 'cluster.nodes_list' has no element [0] (it has no list)");
  EXPECT_EQ(error_of(kValid, {"cluster.nodes[x]=1"}),
            "--set:1:1: 'cluster.nodes[x]=1': 'nodes[x]': a list index is [N] with N a whole number");
}

TEST(Scenario, ACheckOverSeveralKeysBlamesTheOneAnOverrideGave)
{
  // The batch check involves global, dp and micro: an override of micro is blamed, not the file's global.
  EXPECT_EQ(error_of(kValid, {"workload.batch.micro=3"}).substr(0, 35), "--set:1:1: workload.batch.micro=3: ");
  EXPECT_EQ(error_of(kValid, {"cluster.nodes=1", "workload.batch.global=12"}).substr(0, 37),
            "--set:1:2: workload.batch.global=12: ");
  EXPECT_EQ(error_of(kValid, {"cluster.nodes=3"}).rfind("F:", 0), 0u) << "no key of the check was overridden";
}

TEST(Scenario, SetOverridesListElements)
{
  std::string levels = kValid;
  const std::string net = "nics_per_node: 8}";
  levels.replace(levels.find(net), net.size(), "nics_per_node: 8, levels: [{radix: 4}, {radix: 0}]}");
  cs::Scenario s = cs::load_scenario(
      write_temp(levels), {"cluster.network.levels[0].oversubscription=2", "cluster.network.levels[1]={radix: 8}"});
  ASSERT_EQ(s.cluster.network.levels.size(), 2u);
  EXPECT_EQ(s.cluster.network.levels[0].oversubscription, 2.0);
  EXPECT_EQ(s.cluster.network.levels[0].radix, 4);
  EXPECT_EQ(s.cluster.network.levels[1].radix, 8);
  // An error in the element's value blames the override.
  EXPECT_EQ(error_of(levels, {"cluster.network.levels[0].oversubscription=0.5"}).substr(0, 12), "--set:1:1: c");
  // A scenario that leaves the levels at their default (two non-blocking levels) can still change one of them.
  cs::Scenario d = cs::load_scenario(write_temp(kValid), {"cluster.network.levels[0].oversubscription=4"});
  ASSERT_EQ(d.cluster.network.levels.size(), 2u);
  EXPECT_EQ(d.cluster.network.levels[0].oversubscription, 4.0);
  EXPECT_EQ(d.cluster.network.levels[1].oversubscription, 1.0);
  EXPECT_EQ(d.cluster.network.levels[1].radix, cs::FabricLevel{}.radix);
}

TEST(Scenario, DocumentMustBeAMapWithAName)
{
  EXPECT_EQ(error_of("- a\n- b\n"), "F:1:1: a scenario must be a YAML map with at least 'name:'");
  EXPECT_EQ(error_of("seed: 3\n"), "F:1:1: missing required key 'name'");
}

TEST(Scenario, CpuClusterTakesRacks)
{
  cs::Scenario s = cs::load_scenario(write_temp("name: c\ncluster: {racks: 4, hosts_per_rack: 10}\n"));
  EXPECT_TRUE(s.cluster.is_cpu_cluster());
  EXPECT_EQ(s.cluster.device, "cpu-node");
  EXPECT_EQ(s.cluster.network.kind, cs::NetworkKind::TREE);
  EXPECT_EQ(error_of("name: c\ncluster: {racks: 4, hosts_per_rack: 10, nodes: 3}\n"),
            "F:2:48: a CPU cluster (racks) takes hosts_per_rack, not nodes or gpus");
}

TEST(Scenario, EveryKeyIsDocumented)
{
  auto keys = cs::describe_scenario_keys();
  ASSERT_GT(keys.size(), 40u);
  std::ifstream doc(std::string(CS_SOURCE_DIR) + "/docs/scenarios.md");
  std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  for (const auto& k : keys) {
    if (k.help.rfind("[test-", 0) == 0)
      continue; // parameters of test-only policies registered in this binary
    EXPECT_FALSE(k.help.empty()) << k.path;
    EXPECT_NE(text.find("`" + k.path + "`"), std::string::npos) << k.path << " is not in docs/scenarios.md";
  }
}

TEST(Scenario, PipelineShapesAreChecked)
{
  EXPECT_EQ(error_of(kValid, {"workload.parallel.pp=3"}),
            "--set:1:1: workload.parallel.pp=3: tp x pp = 1 x 3 does not divide the cluster's 16 GPUs");
  EXPECT_EQ(error_of(kValid, {"workload.parallel.pp=4", "workload.parallel.dp=8"}),
            "--set:1:2: workload.parallel.dp=8: dp x tp x pp = 8 x 1 x 4 is larger than the cluster's 16 GPUs");
  EXPECT_EQ(error_of(kValid, {"workload.parallel.pp=4", "workload.model.layers=6"}),
            "--set:1:2: workload.model.layers=6: 6 layers do not divide into pp x vpp = 4 x 1 stages "
            "(parallel.partition: balanced allows uneven stages)");
  EXPECT_EQ(
      error_of(kValid, {"workload.parallel.pp=4", "workload.model.layers=3", "workload.parallel.partition=balanced"}),
      "--set:1:2: workload.model.layers=3: 3 layers are fewer than the pp x vpp = 4 x 1 stages");
  EXPECT_EQ(error_of(kValid, {"workload.parallel.pp=2", "workload.parallel.vpp=2", "policies.pipeline=1f1b"}),
            "--set:1:2: workload.parallel.vpp=2: vpp = 2 needs policies.pipeline: interleaved-1f1b");
  // 8 samples / (dp 4 x micro 2) = 1 microbatch per pipeline, not a multiple of pp = 4.
  EXPECT_EQ(error_of(kValid, {"workload.parallel.pp=4", "workload.parallel.vpp=2", "workload.batch.global=8",
                              "workload.model.layers=8"}),
            "--set:1:3: workload.batch.global=8: interleaved-1f1b needs the microbatches per pipeline (1) to be a "
            "multiple of the pipeline stages (4)");
  EXPECT_EQ(error_of(kValid, {"policies.pipeline=zigzag"}).find("unknown pipeline policy 'zigzag'"), 37u);
}

TEST(Scenario, ModelPresetsFillTheModelAndKeysOverrideThem)
{
  // kValid sets layers, hidden, heads, seq and vocab; a preset alone fills them all.
  std::string text = kValid;
  text.replace(text.find("{layers: 2, hidden: 256, heads: 4, seq: 128, vocab: 1000}"),
               std::string("{layers: 2, hidden: 256, heads: 4, seq: 128, vocab: 1000}").size(), "{preset: gpt-145.6b}");
  cs::Scenario s = cs::load_scenario(write_temp(text), {});
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.layers, 80);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.hidden, 12288);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.heads, 96);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.ffn, 4 * 12288);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.dtype, "fp16");
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.recompute, cs::Recompute::FULL);
  s = cs::load_scenario(write_temp(text), {"workload.model.preset=bert-large", "workload.model.layers=12"});
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.layers, 12); // the key given wins over the preset
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.hidden, 1024);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.seq, 512);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.vocab, 30522);
  s = cs::load_scenario(write_temp(text), {"workload.model.preset=llama2-70b"});
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.kv_heads, 8);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.ffn, 28672);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.mlp, "swiglu");
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.norm, cs::Norm::RMSNORM);
  EXPECT_FALSE(cs::workload_as<cs::TrainingWorkload>(s).params.model.tie_embeddings);
  EXPECT_EQ(cs::model_presets().size(), 31u); // GPT, BERT, Llama 2 and 3, Qwen3, MPT, Nemotron-4 and nine MoE models
  EXPECT_NE(error_of(kValid, {"workload.model.preset=llama"}).find("'llama' is not a valid workload.model.preset"),
            std::string::npos);
}

TEST(Scenario, GroupedQueryAttentionKeysAreChecked)
{
  EXPECT_NE(error_of(kValid, {"workload.model.kv_heads=3"}).find("kv_heads (3) must divide heads"), std::string::npos);
  EXPECT_NE(error_of(kValid, {"workload.model.kv_heads=-1"}).find("kv_heads"), std::string::npos);
  EXPECT_NE(error_of(kValid, {"workload.model.mlp=relu"}).find("'relu' is not a valid workload.model.mlp"),
            std::string::npos);
}

namespace {

// kValid with its model replaced by a layer graph (each entry one flow-style layer line) and extra workload lines.
std::string with_graph(const std::vector<std::string>& layers, const std::string& extra = "")
{
  std::string text = kValid;
  const std::string model = "  model: {layers: 2, hidden: 256, heads: 4, seq: 128, vocab: 1000}\n";
  std::string graph = "  model:\n    graph:\n";
  for (const auto& l : layers)
    graph += "      - " + l + "\n";
  text.replace(text.find(model), model.size(), graph + extra);
  return text;
}

} // namespace

TEST(Scenario, LayerGraphsAreReadAndCheckedWithPositions)
{
  const std::string a = "{name: a, flops: 1e9, params: 1e6, activations: 1MB}";
  const std::string b = "{name: b, flops: 1e9, inputs: [a]}";
  cs::Scenario s = cs::load_scenario(write_temp(with_graph({a, b})), {});
  ASSERT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.graph.size(), 2u);
  EXPECT_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.graph[1].inputs, (std::vector<std::string>{"a"}));
  EXPECT_DOUBLE_EQ(cs::workload_as<cs::TrainingWorkload>(s).params.model.graph[0].activations.value, 1e6);
  EXPECT_EQ(error_of(with_graph({a, b})), "");
  // Malformed layers: each error points at the layer's key.
  EXPECT_EQ(error_of(with_graph({a, "{name: b, flops: 1e9, inputs: [c]}"})),
            "F:12:39: input 'c' of layer 'b' is not a layer defined above it");
  EXPECT_EQ(error_of(with_graph({b, a})).find("F:11:"), 0u); // an input defined below is an error too
  EXPECT_NE(error_of(with_graph({a, a})).find("layer name 'a' is used twice"), std::string::npos);
  EXPECT_NE(error_of(with_graph({"{flops: 1e9}"})).find("missing required key 'workload.model.graph[0].name'"),
            std::string::npos);
  EXPECT_NE(error_of(with_graph({"{name: z}"})).find("needs flops or bytes"), std::string::npos);
  EXPECT_NE(error_of(with_graph({"{name: z, flops: -1}"})).find("workload.model.graph[0].flops"), std::string::npos);
  EXPECT_NE(error_of(with_graph({"{name: z, flops: 1, colour: red}"})).find("colour"), std::string::npos);
  EXPECT_NE(error_of(with_graph({"[1, 2]"})).find("graph[0]"), std::string::npos);
  // Tensor parallelism and ZeRO split any layer; interleaving a graph's stages does not.
  EXPECT_EQ(error_of(with_graph({a, b}), {"workload.parallel.tp=2", "workload.parallel.zero=3"}), "");
  EXPECT_NE(
      error_of(with_graph({a, b}), {"workload.parallel.vpp=2", "workload.parallel.pp=2"}).find("one stage per device"),
      std::string::npos);
  EXPECT_NE(error_of(with_graph({a, b}), {"workload.parallel.pp=4"}).find("more stages than the graph's 2 layers"),
            std::string::npos);
  // Two branches joining: the graph pipeline needs a stage per branch.
  const std::string c = "{name: c, flops: 1e9}", d = "{name: d, flops: 1e9, inputs: [a, c]}";
  EXPECT_NE(error_of(with_graph({a, c, d}), {"workload.parallel.pp=2", "policies.pipeline=graph-pipeline"})
                .find("the layer graph has 3 branches; graph-pipeline needs pp >= 3"),
            std::string::npos);
  EXPECT_EQ(error_of(with_graph({a, c, d}), {"workload.parallel.pp=2", "policies.pipeline=1f1b"}), "");
}

TEST(Scenario, LayerGraphKernelsAreReadAndChecked)
{
  // A layer may be a kernel descriptor (a fused chain here); its FLOPs and bytes are then the kernel's.
  const std::string k = "{name: k, kernel: {family: gemm-chain, m: 2048, n: 2048, k: 64, p: 64, batch: 4}}";
  cs::Scenario s = cs::load_scenario(write_temp(with_graph({k})), {});
  const auto& layer = cs::workload_as<cs::TrainingWorkload>(s).params.model.graph[0];
  ASSERT_TRUE(layer.kernel.has_value());
  EXPECT_DOUBLE_EQ(layer.flops, 2.0 * 2048 * 2048 * (64 + 64) * 4);
  EXPECT_EQ(error_of(with_graph({k})), "");
  EXPECT_EQ(error_of(with_graph({"{name: k, kernel: {family: gemm-chain, m: 64, n: 64, k: 64}}"})),
            "F:11:27: gemm-chain needs --p");
  EXPECT_NE(error_of(with_graph({"{name: k, kernel: {family: mx-gemm, m: 1, n: 1, k: 1, element: fp5}}"}))
                .find("unknown MX element format 'fp5'"),
            std::string::npos);
  EXPECT_NE(error_of(with_graph({"{name: k, kernel: [gemm]}"})).find("must be a map"), std::string::npos);
  // A kernel the device has no units for is refused at that layer's kernel, not mid-run.
  const std::string fp8 = "{name: k, kernel: {family: gemm, m: 64, n: 64, k: 64, dtype: fp8}}";
  EXPECT_EQ(error_of(with_graph({"{name: a, flops: 1e9}", fp8}), {"cluster.device=a100-sxm4-80gb"}),
            "F:12:27: a100-sxm4-80gb has no fp8 compute units");
  EXPECT_NE(error_of(with_graph({"{name: k, flops: 1, kernel: {family: gemm, m: 1, n: 1, k: 1}}"}))
                .find("gives flops or bytes and a kernel"),
            std::string::npos);
}

TEST(Scenario, BlamingAKeyLeavesTheResolvedDocumentAlone)
{
  // error_at once rebound its cursor with YAML::Node::operator=, which overwrote the document's root with the
  // blamed value: a scenario checked twice, or written after a caught error, lost its keys.
  cs::Scenario s = cs::load_scenario(write_temp(kValid));
  (void)s.source.error_at("workload.batch.micro", "x");
  EXPECT_TRUE(s.source.resolved()["cluster"].IsMap());
  EXPECT_EQ(s.source.resolved()["name"].as<std::string>(), "t");
  EXPECT_FALSE(s.source.from_override("workload.batch.micro"));
  cs::Scenario o = cs::load_scenario(write_temp(kValid), {"workload.batch.micro=4"});
  EXPECT_TRUE(o.source.from_override("workload.batch.micro"));
}

TEST(Scenario, ASchedulesVerdictOnAShapeIsTheSameWhenAskedAgain)
{
  // check_pipeline asks a schedule whether it runs a shape once per process (the planner checks tens of thousands of
  // plans): the second scenario of the same shape is refused as the first was, and another shape is asked anew.
  const std::vector<std::string> dualpipev{"workload.parallel.pp=2", "policies.pipeline=dualpipev",
                                           "workload.model.layers=4"};
  const std::string refused = "F:10:19: dualpipev needs at least 2 x pp = 4 microbatches per step, not 2"; // batch
  EXPECT_EQ(error_of(kValid, dualpipev), refused);
  EXPECT_EQ(error_of(kValid, dualpipev), refused);
  auto more = dualpipev;
  more.push_back("workload.batch.global=64"); // 4 microbatches a step: runs
  EXPECT_EQ(error_of(kValid, more), "");
  EXPECT_EQ(error_of(kValid, dualpipev), refused);
}
