// All-to-all size matrices shared by value, so that the all-to-alls of many steps that move the same sizes hold one
// matrix between them; and the scalings and transposes the MoE emitter takes of a step's matrix.
#pragma once

#include "core/task_graph.hpp"

#include <cstdint>
#include <map>
#include <vector>

namespace cs {

class SizeMatrixPool {
public:
  /** `sizes` as a matrix shared with every earlier one of the same values. */
  SizeMatrix share(std::vector<double> sizes);

private:
  std::map<std::uint64_t, std::vector<SizeMatrix>> by_hash_; // by a hash of their values; looked up, never iterated
};

/** n x n `m` times `factor`, transposed if asked. */
std::vector<double> scaled_sizes(const std::vector<double>& m, double factor, bool transpose, int n);
/** Whether n x n `m` equals its transpose. */
bool symmetric_sizes(const std::vector<double>& m, int n);

} // namespace cs
