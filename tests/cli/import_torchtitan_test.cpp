// clustersim import of torchtitan configurations: which switches turn Float8 (or MX) training on, read as the releases
// that wrote them meant them.
#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/transformer.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/cli/import_run.hpp"
#include "tests/test_support.hpp"
#include "workloads/training/training_workload.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace {

// The FP8 recipe an imported scenario runs ("" for none).
std::string fp8_of(const std::filesystem::path& scenario)
{
  const cs::Scenario s = cs::load_scenario(scenario.string(), {});
  const auto& fp8 = cs::workload_as<cs::TrainingWorkload>(s).params.model.fp8;
  return fp8 ? fp8->name() : "";
}

// torchtitan's llama3_8b.toml of 2025: a [float8] table of settings and the converter that would use them commented
// out, as the repository ships it. `model_extra` goes at the end of [model].
std::string titan_llama3_8b(const std::string& model_extra)
{
  return "[model]\nname = \"llama3\"\nflavor = \"8B\"\n# converters = \"float8\"\n" + model_extra +
         "\n[training]\nlocal_batch_size = 2\nseq_len = 8192\n"
         "[float8]\nenable_fsdp_float8_all_gather = false\nprecompute_float8_dynamic_scale_for_fsdp = false\n"
         "filter_fqns = \"output\"\n";
}

cs::testing::ImportResult import_titan_toml(const std::string& name, const std::string& text,
                                            const std::string& options)
{
  return cs::testing::import_file(cs::testing::write_temp(name + ".toml", text).string(), options);
}

} // namespace

TEST(ImportTorchtitan, Float8IsWhatAConverterOrTheOldSwitchTurnsOnNotTheSettingsTable)
{
  // As shipped: the settings are there, Float8 is off, and they are named as changing nothing.
  const auto off = import_titan_toml("shipped", titan_llama3_8b(""), "--gpus 8");
  ASSERT_EQ(off.r.code, 0) << off.r.err;
  EXPECT_EQ(fp8_of(off.file), "");
  EXPECT_NE(off.r.err.find("float8.enable_fsdp_float8_all_gather (Float8 training is off)"), std::string::npos)
      << off.r.err;
  EXPECT_NE(off.r.err.find("float8.filter_fqns (Float8 training is off)"), std::string::npos) << off.r.err;
  // The converter as a string, in a list, under its later dotted name; the 2024 switch.
  for (const char* on : {"converters = \"float8\"", "converters = [\"float8\"]",
                         "converters = [\"quantize.linear.float8\"]", "converters = \"foo, float8\""}) {
    const auto i = import_titan_toml("on", titan_llama3_8b(on), "--gpus 8");
    ASSERT_EQ(i.r.code, 0) << on << ": " << i.r.err;
    EXPECT_EQ(fp8_of(i.file), "tensorwise") << on;
    EXPECT_EQ(i.r.err.find("filter_fqns"), std::string::npos) << i.r.err; // the output layer stays bf16 either way
  }
  // Modules kept in bf16 besides the output layer are approximated as the output layer alone; recomputing the
  // weights' FP8 copies in backward is named as changing nothing the step counts.
  const auto kept = import_titan_toml(
      "kept", titan_llama3_8b("converters = \"float8\"") + "force_recompute_fp8_weight_in_bwd = true\n", "--gpus 8");
  ASSERT_EQ(kept.r.code, 0) << kept.r.err;
  EXPECT_EQ(kept.r.err.find("filter_fqns (the output layer alone"), std::string::npos) << kept.r.err;
  EXPECT_NE(kept.r.err.find("float8.force_recompute_fp8_weight_in_bwd (the weights' FP8 copies cast again"),
            std::string::npos)
      << kept.r.err;
  std::string wider = titan_llama3_8b("converters = \"float8\"");
  wider.replace(wider.find("filter_fqns = \"output\""), 22, "filter_fqns = [\"output\", \"layers.0\"]");
  const auto w = import_titan_toml("wider", wider, "--gpus 8");
  ASSERT_EQ(w.r.code, 0) << w.r.err;
  EXPECT_NE(w.r.err.find("float8.filter_fqns (the output layer alone is kept in bf16)"), std::string::npos) << w.r.err;
  const auto old = import_titan_toml("switch", titan_llama3_8b("") + "enable_float8_linear = true\n", "--gpus 8");
  ASSERT_EQ(old.r.code, 0) << old.r.err;
  EXPECT_EQ(fp8_of(old.file), "tensorwise");
  // MX: the MXFP8 recipe, which a Blackwell runs and a Hopper refuses (nothing written).
  const auto mx = import_titan_toml("mx", titan_llama3_8b("converters = [\"mx\"]"), "--gpus 8 --device b200");
  ASSERT_EQ(mx.r.code, 0) << mx.r.err;
  EXPECT_EQ(fp8_of(mx.file), "mxfp8");
  const auto hopper = import_titan_toml("mx_h100", titan_llama3_8b("converters = [\"mx\"]"), "--gpus 8");
  EXPECT_EQ(hopper.r.code, 2) << hopper.r.err;
  EXPECT_NE(hopper.r.err.find("Blackwell"), std::string::npos) << hopper.r.err;
  EXPECT_FALSE(std::filesystem::exists(hopper.file));
  // Not a name or a list of names: the value's position.
  const auto bad = import_titan_toml("bad", titan_llama3_8b("converters = 3"), "--gpus 8");
  EXPECT_EQ(bad.r.code, 2) << bad.r.err;
  EXPECT_NE(bad.r.err.find(":5:14: [model] converters is a name or a list of names"), std::string::npos) << bad.r.err;
  const auto bad_entry = import_titan_toml("bad_entry", titan_llama3_8b("converters = [\"float8\", 2]"), "--gpus 8");
  EXPECT_EQ(bad_entry.r.code, 2) << bad_entry.r.err;
  EXPECT_NE(bad_entry.r.err.find(":5:25: [model] converters lists names (strings)"), std::string::npos)
      << bad_entry.r.err;
}

namespace {

// A folder holding torchtitan's llama3_8b.toml (as shipped, 2025 layout) and a launch command `command` beside it.
std::filesystem::path launch_dir(const std::string& name, const std::string& command)
{
  const auto dir = cs::testing::fresh_dir("titan_launch_" + name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "llama3_8b.toml") << titan_llama3_8b("") << "[compile]\nenable = false\n"
                                        << "[activation_checkpoint]\nmode = \"selective\"\n";
  std::ofstream(dir / "launch.sh") << command;
  return dir / "launch.sh";
}

const cs::TrainingParams& titan_run(const cs::Scenario& s) { return cs::workload_as<cs::TrainingWorkload>(s).params; }

} // namespace

TEST(ImportTorchtitan, ALaunchCommandIsItsTomlWithTheOverridesOnTop)
{
  // Trainy's H200 command (torchtitan benchmarks/llama3_8b_h200_2025-06_torchtitan.md), the TOML's repository path
  // resolved by its file name beside the command.
  const auto trainy =
      launch_dir("trainy", "torchrun \\\n  --nnodes 4 \\\n  --nproc_per_node 8 \\\n"
                           "  --rdzv_id 101 --rdzv_backend c10d --rdzv_endpoint \"$MASTER_ADDR:29500\" \\\n"
                           "  torchtitan/train.py \\\n"
                           "  --job.config-file torchtitan/models/llama3/train_configs/llama3_8b.toml \\\n"
                           "  --metrics.enable_wandb --training.local_batch_size=2 --training.compile \\\n"
                           "  --model.converters=\"float8\" --float8.enable_fsdp_float8_all_gather \\\n"
                           "  --float8.force_recompute_fp8_weight_in_bwd --training.steps 2000\n");
  const auto i = cs::testing::import_file(trainy.string(), "--device h200-sxm");
  ASSERT_EQ(i.r.code, 0) << i.r.err;
  const cs::Scenario s = cs::load_scenario(i.file.string(), {});
  EXPECT_EQ(s.cluster.nodes, 4);
  EXPECT_EQ(s.cluster.gpus_per_node, 8);
  const auto& t = titan_run(s);
  EXPECT_EQ(t.batch.micro, 2);
  EXPECT_EQ(t.batch.global, 64);
  EXPECT_EQ(t.framework.name, "fsdp"); // --training.compile
  ASSERT_TRUE(t.model.fp8);
  EXPECT_TRUE(t.framework.fp8_param_gather);
  for (const char* named : {"metrics.enable_wandb", "training.steps", "force_recompute_fp8_weight_in_bwd", "--rdzv_id"})
    EXPECT_NE(i.r.err.find(named), std::string::npos) << named << ": " << i.r.err;
  // torchtitan's run_train.sh: NGPU GPUs on one node (8 unless set), a later override of a key winning.
  const auto script = launch_dir("script", "CONFIG_FILE=./llama3_8b.toml NGPU=4 ./run_train.sh "
                                           "--parallelism.tensor_parallel_degree 4 --training.local_batch_size 1 "
                                           "--training.local_batch_size=3\n");
  const auto r = cs::testing::import_file(script.string());
  ASSERT_EQ(r.r.code, 0) << r.r.err;
  const cs::Scenario rs = cs::load_scenario(r.file.string(), {});
  EXPECT_EQ(rs.cluster.nodes * rs.cluster.gpus_per_node, 4);
  EXPECT_EQ(titan_run(rs).parallel.tp, 4);
  EXPECT_EQ(titan_run(rs).batch.micro, 3);
  EXPECT_EQ(titan_run(rs).framework.name, "torch-eager");
  // A negated switch turns off a true-or-false key the TOML has.
  const auto negated = launch_dir("negated", "CONFIG_FILE=llama3_8b.toml ./run_train.sh --compile.enable "
                                             "--compile.no-enable\n");
  const auto ng = cs::testing::import_file(negated.string());
  ASSERT_EQ(ng.r.code, 0) << ng.r.err;
  EXPECT_EQ(titan_run(cs::load_scenario(ng.file.string(), {})).framework.name, "torch-eager");
  const auto eight = launch_dir("eight", "CONFIG_FILE=llama3_8b.toml ./run_train.sh\n");
  const auto e = cs::testing::import_file(eight.string());
  ASSERT_EQ(e.r.code, 0) << e.r.err;
  const cs::Scenario es = cs::load_scenario(e.file.string(), {});
  EXPECT_EQ(es.cluster.nodes * es.cluster.gpus_per_node, 8);
  // Node counts the shell fills in are not read: --gpus says them.
  const auto shell = launch_dir("shell", "torchrun --nnodes $NUM_NODES --nproc_per_node 8 train.py "
                                         "--job.config_file llama3_8b.toml\n");
  const auto unsized = cs::testing::import_file(shell.string());
  EXPECT_EQ(unsized.r.code, 2) << unsized.r.err;
  const auto sized = cs::testing::import_file(shell.string(), "--gpus 32");
  ASSERT_EQ(sized.r.code, 0) << sized.r.err;
  EXPECT_NE(sized.r.err.find("set by the shell, so not read: $NUM_NODES"), std::string::npos) << sized.r.err;
}

TEST(ImportTorchtitan, ALaunchCommandsBadWordsAreRefusedWhereTheyAre)
{
  const std::vector<std::pair<std::string, std::string>> bad{
      {"torchrun train.py --training.compile\n", ":1:1: a torchtitan launch names its configuration"},
      {"torchrun train.py \\\n  --job.config_file missing.toml\n",
       ":2:21: cannot find the torchtitan configuration 'missing.toml'"},
      {"torchrun train.py --job.config_file llama3_8b.toml \\\n  --training.local_batch_size=two\n",
       ":2:31: --training.local_batch_size takes a whole number, not 'two'"},
      {"torchrun train.py --job.config_file llama3_8b.toml --compile.enable=maybe\n",
       ":1:69: --compile.enable takes true or false, not 'maybe'"},
      {"torchrun train.py --job.config_file llama3_8b.toml --activation_checkpoint.mode=partial\n",
       ":1:81: mode is none, selective or full, not 'partial'"},
      {"torchrun train.py --job.config_file llama3_8b.toml --training.seq_len\n",
       ":1:52: --training.seq_len needs a value"},
      {"torchrun train.py --job.config_file llama3_8b.toml --model..x=1\n",
       ":1:52: --model..x is not a --section.key override"},
      {"torchrun --nproc_per_node eight train.py --job.config_file llama3_8b.toml\n",
       ":1:27: the GPUs a node is a positive whole number, not 'eight'"},
  };
  int n = 0;
  for (const auto& [command, message] : bad) {
    const auto i = cs::testing::import_file(launch_dir("bad" + std::to_string(n++), command).string(),
                                            "--gpus 8 --format torchtitan");
    EXPECT_EQ(i.r.code, 2) << command << i.r.err;
    EXPECT_NE(i.r.err.find(message), std::string::npos) << command << i.r.err;
    EXPECT_FALSE(std::filesystem::exists(i.file));
  }
  // A configuration that is not TOML: its own file, line and column.
  const auto broken = launch_dir("broken_toml", "torchrun train.py --job.config_file llama3_8b.toml\n");
  std::ofstream(broken.parent_path() / "llama3_8b.toml") << "[model]\nname = \"llama3\n";
  const auto b = cs::testing::import_file(broken.string(), "--gpus 8");
  EXPECT_EQ(b.r.code, 2) << b.r.err;
  EXPECT_NE(b.r.err.find("llama3_8b.toml:2:"), std::string::npos) << b.r.err;
  EXPECT_NE(b.r.err.find("not TOML"), std::string::npos) << b.r.err;
  EXPECT_FALSE(std::filesystem::exists(b.file));
}
