// SplitMix64's finaliser: a cheap, well-mixed, platform-independent 64-bit hash for counter-based seeded draws
// (std::hash is neither portable nor mixed).
#pragma once

#include <cstdint>

namespace cs {

inline std::uint64_t splitmix64(std::uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

} // namespace cs
