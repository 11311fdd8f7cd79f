#include "workloads/collective/collective_params.hpp"

#include "models/collectives/collective_algorithm.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace cs {

void read_collective(ObjectReader col, CollectiveParams& c)
{
  std::vector<std::string> algorithms{"auto"}; // and every registered algorithm
  for (const auto& [name, a] : collective_algorithm_list())
    algorithms.push_back(name);
  col.choice("op", c.op, {"all-reduce", "reduce-scatter", "all-gather", "broadcast", "all-to-all", "p2p"},
             "operation (sizes as nccl-tests counts them)")
      .choice("algorithm", c.algorithm, algorithms, "algorithm; auto = the tuner's fastest by the closed forms")
      .field("min_bytes", c.min_bytes, "smallest size (0 is valid: latency only)")
      .field("max_bytes", c.max_bytes, "largest size")
      .field("factor", c.factor, "size multiplier between rows")
      .field("ranks", c.ranks, "GPUs taking part, from the first (0 = all)")
      .field("root", c.root, "broadcast root rank")
      .choice("pricing", c.pricing, {"auto", "closed-form", "flows"},
              "analytical backend: closed-form prices each size by the tuner's formula, flows list-schedules the "
              "step-wise transfers; auto = closed-form on an idle non-blocking fabric, else flows");
  col.finish();
  col.require_non_negative("min_bytes", c.min_bytes.value);
  col.require_positive("max_bytes", c.max_bytes.value);
  col.require_non_negative("ranks", c.ranks);
  col.require_non_negative("root", c.root);
  if (!col.describing() && !(c.factor > 1))
    col.fail_at("factor", "factor must be greater than 1");
  if (!col.describing() && c.min_bytes.value > c.max_bytes.value)
    col.fail_at("min_bytes", "min_bytes is larger than max_bytes");
  // A factor of 1.0000001 between 1 KiB and 8 GiB would be 160 million rows: bounded before anything runs.
  if (!col.describing()) {
    const double rows = std::log(c.max_bytes.value / std::max(c.min_bytes.value, 1024.0)) / std::log(c.factor) + 1;
    if (rows > 10000)
      col.fail_at("factor", fmt::format("the sweep would have {:.0f} sizes; at most 10000 (a larger factor or a "
                                        "narrower size range)",
                                        rows));
  }
}

} // namespace cs
