#include "sim/plan/most_layers.hpp"

#include <algorithm>

namespace cs {

int most_layers_within(int hi, double budget, const std::function<double(int)>& memory)
{
  int fits = 0, over = hi + 1; // memory(fits) <= budget < memory(over), the ends as sentinels
  auto probe = [&](int l) {    // each probe keeps that, so the answer is the bisection's
    if (l > fits && l < over)
      (memory(l) > budget ? over : fits) = l;
  };
  if (hi < 1)
    return 0;
  const double one = memory(1);
  (one > budget ? over : fits) = 1;
  if (fits == 1 && hi > 1) {
    const double top = memory(hi);
    (top > budget ? over : fits) = hi;
    if (over == hi) {
      const int guess = std::clamp(1 + static_cast<int>((budget - one) / (top - one) * (hi - 1)), 1, hi - 1);
      probe(guess);
      probe(guess + 1);
    }
  }
  while (over - fits > 1)
    probe((fits + over) / 2);
  return fits;
}

} // namespace cs
