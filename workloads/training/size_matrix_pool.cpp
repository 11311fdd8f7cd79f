#include "workloads/training/size_matrix_pool.hpp"

#include <cstring>

namespace cs {

SizeMatrix SizeMatrixPool::share(std::vector<double> sizes)
{
  std::uint64_t hash = 1469598103934665603ull; // FNV-1a over the values' bits
  for (double x : sizes) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    hash = (hash ^ bits) * 1099511628211ull;
  }
  auto& alike = by_hash_[hash];
  for (const SizeMatrix& m : alike)
    if (m.values() == sizes)
      return m;
  alike.emplace_back(std::move(sizes));
  return alike.back();
}

std::vector<double> scaled_sizes(const std::vector<double>& m, double factor, bool transpose, int n)
{
  std::vector<double> out(m.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      out[std::size_t(i) * n + j] = factor * (transpose ? m[std::size_t(j) * n + i] : m[std::size_t(i) * n + j]);
  return out;
}

bool symmetric_sizes(const std::vector<double>& m, int n)
{
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (m[std::size_t(i) * n + j] != m[std::size_t(j) * n + i])
        return false;
  return true;
}

} // namespace cs
