// libFuzzer target: --set override texts applied to the quickstart scenario, then the checks.
#include "base/input_error.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/scenario/scenario.hpp"

#include <cstdint>
#include <string>

namespace {
const char* kBase = R"(name: q
cluster: {device: h100-sxm5, nodes: 2, gpus_per_node: 8, network: {kind: fat-tree, levels: [{radix: 4}, {}]}}
workload:
  kind: transformer-training
  model: {layers: 2, hidden: 256, heads: 4, seq: 128, vocab: 1000}
  batch: {global: 32, micro: 2}
)";
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  // Newlines separate overrides, so one input can hold several.
  std::vector<std::string> sets;
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      sets.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  sets.push_back(current);
  try {
    cs::Scenario s = cs::load_scenario_text(kBase, "fuzz.yaml", sets);
    cs::check_scenario(s);
  } catch (const cs::InputError&) {
  }
  return 0;
}
