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

} // namespace cs
