// libFuzzer target: scenario text (YAML) through reading and the checks. Only InputError may escape the parser.
#include "base/input_error.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/scenario/scenario.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    cs::Scenario s = cs::load_scenario_text(text, "fuzz.yaml");
    cs::check_scenario(s);
  } catch (const cs::InputError&) {
  }
  return 0;
}
