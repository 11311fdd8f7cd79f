#include "base/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace cs {

double percentile(std::vector<double> values, double q)
{
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * values.size()));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

Intervals union_of(Intervals v)
{
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& iv : v)
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  return out;
}

double length(const Intervals& merged)
{
  double total = 0;
  for (const auto& [a, b] : merged)
    total += b - a;
  return total;
}

double overlap(const Intervals& a, const Intervals& b)
{
  double covered = 0;
  std::size_t j = 0;
  for (const auto& [x, y] : a) {
    while (j < b.size() && b[j].second <= x)
      ++j;
    for (std::size_t k = j; k < b.size() && b[k].first < y; ++k)
      covered += std::min(y, b[k].second) - std::max(x, b[k].first);
  }
  return covered;
}

} // namespace cs
