// All-to-all sizes shared by value (workloads/training/size_matrix_pool.hpp), and the scalings and transposes the MoE
// emitter takes of a step's matrix.
#include "workloads/training/size_matrix_pool.hpp"

#include <gtest/gtest.h>

TEST(SizeMatrixPool, EqualSizesShareOneMatrixAndOthersDoNot)
{
  cs::SizeMatrixPool pool;
  const cs::SizeMatrix a = pool.share({0, 1, 2, 0}), b = pool.share({0, 1, 2, 0}), c = pool.share({0, 2, 1, 0});
  EXPECT_EQ(&a.values(), &b.values()); // one vector for both
  EXPECT_NE(&a.values(), &c.values());
  EXPECT_EQ(c.values(), (std::vector<double>{0, 2, 1, 0}));
}

TEST(SizeMatrixPool, ScaledTransposedAndSymmetric)
{
  const std::vector<double> m = {0, 1, 2, 3, 0, 5, 6, 7, 0}; // 3 x 3, row i sent by rank i
  EXPECT_EQ(cs::scaled_sizes(m, 2, false, 3), (std::vector<double>{0, 2, 4, 6, 0, 10, 12, 14, 0}));
  EXPECT_EQ(cs::scaled_sizes(m, 1, true, 3), (std::vector<double>{0, 3, 6, 1, 0, 7, 2, 5, 0}));
  EXPECT_FALSE(cs::symmetric_sizes(m, 3));
  EXPECT_TRUE(cs::symmetric_sizes({0, 4, 4, 0}, 2));
}
