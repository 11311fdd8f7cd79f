// libFuzzer target: calibration measurement JSON.
#include "base/input_error.hpp"
#include "calibrate/fit/measurements.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  try {
    cs::parse_measurements(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const cs::InputError&) {
  }
  return 0;
}
