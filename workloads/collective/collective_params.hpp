// What a collective sweep reads from `workload.collective:`: the operation, algorithm and sizes (nccl-tests-like).
#pragma once

#include "base/yaml_reader.hpp"

#include <string>

namespace cs {

/** A collective swept over message sizes, like nccl-tests. */
struct CollectiveParams {
  std::string op = "all-reduce";
  std::string algorithm = "auto";
  Bytes min_bytes{1024};
  Bytes max_bytes{8.0 * 1073741824.0};
  double factor = 2;            // size multiplier between rows
  int ranks = 0;                // 0 = every GPU
  int root = 0;                 // broadcast root
  std::string pricing = "auto"; // analytical backend: auto | closed-form | flows (simgrid always runs flows)
};

/** Reads `workload.collective:`. */
void read_collective(ObjectReader col, CollectiveParams& c);

} // namespace cs
