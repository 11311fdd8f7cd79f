// libFuzzer target: clustersim import's readers. The first byte picks the format (t: a torchtitan TOML, l: a torchtitan
// launch command over a fixed Llama 3 8B TOML, h: a Hugging Face config.json, anything else: Megatron arguments); the
// scenario they make is then loaded and checked as `import` does before writing.
#include "base/input_error.hpp"
#include "sim/import/hf_config.hpp"
#include "sim/import/megatron_args.hpp"
#include "sim/import/torchtitan_launch.hpp"
#include "sim/import/torchtitan_toml.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/scenario/scenario.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  if (size == 0)
    return 0;
  const char format = char(data[0]);
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    static const std::string llama3_8b = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\n"
                                         "local_batch_size = 2\nseq_len = 8192\n[compile]\nenable = false\n";
    const cs::ImportedRun run = format == 't'   ? cs::read_torchtitan_toml(text, "fuzz.toml")
                                : format == 'l' ? cs::read_torchtitan_launch(text, "fuzz.sh", llama3_8b, "fuzz.toml")
                                : format == 'h' ? cs::read_hf_config(text, "fuzz.json")
                                                : cs::read_megatron_args(text, "fuzz.args");
    const std::string yaml = cs::imported_scenario_yaml(run, {"fuzz", "h100-sxm5", 8, 8}, "fuzz", "fuzz");
    cs::check_scenario(cs::load_scenario_text(yaml, "fuzz.yaml", {}));
  } catch (const cs::InputError&) {
  }
  return 0;
}
