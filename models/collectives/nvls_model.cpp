#include "models/collectives/nvls_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace cs {

double nvls_size_efficiency(double bytes)
{
  // From Azure's ND H100 v5 all_reduce_perf sweep (NCCL 2.18.5, NVLS; hardware.yaml): efficiency =
  // S(n+1)/n / ((time - kNvlsLatency) x 370.8 GB/s x 0.85) at 1 MiB, 16 MiB, 128 MiB and 1 GiB (busbw 43.7, 234.5,
  // 400.6, 466.4 GB/s). The 8 GiB point is left out: it is the §2 validation row's own source.
  static constexpr std::array<std::pair<double, double>, 4> kPoints = {{
      {1048576.0, 0.220},
      {16777216.0, 0.597},
      {134217728.0, 0.853},
      {1073741824.0, 0.957},
  }};
  if (!(bytes > kPoints.front().first))
    return kPoints.front().second;
  for (std::size_t i = 1; i < kPoints.size(); ++i)
    if (bytes <= kPoints[i].first) {
      const auto& [x0, y0] = kPoints[i - 1];
      const auto& [x1, y1] = kPoints[i];
      const double f = std::log(bytes / x0) / std::log(x1 / x0);
      return y0 + f * (y1 - y0);
    }
  return kPoints.back().second;
}

double nvls_tree_busbw_cap(int nodes, int heads)
{
  return std::max(1, heads) * (nodes <= 2 ? kNvlsTreeHeadBusbwTwoNodes : kNvlsTreeHeadBusbw);
}

} // namespace cs
