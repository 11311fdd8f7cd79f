// `clustersim import FILE [--gpus N] [--out SCENARIO.yaml]`: a Megatron-LM argument list, Megatron-Bridge overrides,
// a torchtitan TOML or a Hugging Face config.json turned into a scenario the user can run and edit, with every setting
// it could not model named.
#include "base/input_error.hpp"
#include "base/json_input.hpp"
#include "sim/cli/command.hpp"
#include "sim/import/hf_config.hpp"
#include "sim/import/megatron_args.hpp"
#include "sim/import/torchtitan_launch.hpp"
#include "sim/import/torchtitan_toml.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/scenario/scenario.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

namespace cs {
namespace {

struct ImportArgs {
  std::string input, out, format = "auto";
  ImportCluster cluster{"", "h100-sxm5", 0, 0};
};

// Loads and checks the scenario text as `run` would, so that what is written runs.
void check_runs(const std::string& yaml, const std::string& input)
{
  try {
    check_scenario(load_scenario_text(yaml, input, {}));
  } catch (const InputError& e) {
    throw InputError(input, 1, 1, std::string("the imported scenario does not run: ") + e.what());
  }
}

int import_config(ImportArgs a)
{
  const std::string text = read_text_file(a.input, "configuration");
  std::string format = a.format;
  const auto ext = std::filesystem::path(a.input).extension();
  if (format == "auto")
    format = ext == ".toml" || looks_like_torchtitan(text) || looks_like_torchtitan_launch(text) ? "torchtitan"
             : ext == ".json" || looks_like_hf_config(text)                                      ? "hf"
                                                                                                 : "megatron";
  // torchtitan's configuration itself, or a command that launches it with overrides on top.
  const bool launch = format == "torchtitan" && ext != ".toml" && !looks_like_torchtitan(text);
  const ImportedRun run = launch                   ? read_torchtitan_launch(text, a.input)
                          : format == "torchtitan" ? read_torchtitan_toml(text, a.input)
                          : format == "hf"         ? read_hf_config(text, a.input)
                                                   : read_megatron_args(text, a.input);
  if (a.cluster.name.empty())
    a.cluster.name = std::filesystem::path(a.input).stem().string();
  const std::string yaml = imported_scenario_yaml(run, a.cluster, a.input, format);
  check_runs(yaml, a.input);
  for (const auto& w : run.warnings())
    std::cerr << a.input << ": warning: " << w << "\n";
  if (a.out.empty()) {
    std::cout << yaml;
  } else {
    // Written beside its place, then renamed: a reader never sees half a scenario.
    const std::filesystem::path out(a.out), tmp(a.out + ".tmp");
    std::error_code ec;
    if (out.has_parent_path())
      std::filesystem::create_directories(out.parent_path(), ec);
    std::ofstream file(tmp, std::ios::binary);
    if (!(file << yaml) || !file.flush())
      throw InputError(a.out, 0, 0, "cannot write the scenario");
    file.close();
    std::filesystem::rename(tmp, out);
    std::cerr << "wrote " << a.out << "\n";
  }
  return 0;
}

} // namespace

std::vector<Command> add_import_commands(CLI::App& app)
{
  auto a = std::make_shared<ImportArgs>();
  auto* cmd = app.add_subcommand("import", "turn a Megatron-LM argument list, Megatron-Bridge overrides, a torchtitan "
                                           "TOML or a Hugging Face config.json into a scenario (warnings name what is "
                                           "not modelled)");
  cmd->add_option("input", a->input,
                  "the arguments (a text file, as typed after pretrain_gpt.py or torchrun), the torchtitan .toml or "
                  "a command launching it with overrides (torchrun ... --job.config_file X.toml --training.compile), "
                  "or a Hugging Face config.json")
      ->required();
  cmd->add_option("--format", a->format, "auto (by extension and content), megatron, torchtitan or hf")
      ->check(CLI::IsMember({"auto", "megatron", "torchtitan", "hf"}));
  cmd->add_option("--gpus", a->cluster.gpus,
                  "GPUs of the run, when the input does not say (torchrun's --nnodes x "
                  "--nproc_per_node)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--gpus-per-node", a->cluster.gpus_per_node, "GPUs a node (default: the input's, else 8)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--device", a->cluster.device, "catalog device (default h100-sxm5)");
  cmd->add_option("--name", a->cluster.name, "scenario name (default: the input file's stem)");
  cmd->add_option("--out", a->out, "scenario file to write (default: standard output)");
  return {{cmd, [a] { return import_config(*a); }}};
}

} // namespace cs
