// libFuzzer target: device profile JSON, and a prediction with what was read.
#include "base/input_error.hpp"
#include "models/cost/device_profile.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  try {
    cs::parse_profile(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const cs::InputError&) {
  }
  return 0;
}
