// libFuzzer target: sizes, rates and times with units. Every result is finite and within the documented bounds.
#include "base/units.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  for (auto parse : {cs::units::parse_bytes, cs::units::parse_rate, cs::units::parse_time})
    if (auto v = parse(text, &error); v && (!std::isfinite(*v) || std::fabs(*v) > cs::units::kMaxBytes))
      std::abort();
  return 0;
}
