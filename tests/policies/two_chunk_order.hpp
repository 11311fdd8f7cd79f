// Checks one device's order under a schedule of two chunks a device that pairs and splits passes (DualPipe, DualPipeV).
#pragma once

#include "policies/pipeline/pipeline_schedule.hpp"

#include <gtest/gtest.h>
#include <vector>

namespace cs::testing {

/** Chunk c runs microbatches first[c] .. first[c] + count - 1: each forward and each input-gradient pass once and in
 *  order, a weight pass for every split backward, overlapped ops in forward/backward pairs of different chunks. */
inline void expect_two_chunk_order(const std::vector<PipelineOp>& ops, const int (&first)[2], int count, int device)
{
  int forwards[2] = {first[0], first[1]}, inputs[2] = {first[0], first[1]}, splits = 0, weights = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    ASSERT_TRUE(op.chunk == 0 || op.chunk == 1);
    if (op.forward()) {
      EXPECT_EQ(op.microbatch, forwards[op.chunk]++) << "device " << device << " op " << i;
    } else if (op.sends_gradient()) {
      EXPECT_EQ(op.microbatch, inputs[op.chunk]++) << "device " << device << " op " << i;
    }
    splits += op.pass == Pass::BACKWARD_INPUT ? 1 : 0;
    weights += op.pass == Pass::BACKWARD_WEIGHT ? 1 : 0;
    if (op.overlap == Overlap::WITH_NEXT) {
      ASSERT_LT(i + 1, ops.size());
      EXPECT_EQ(ops[i + 1].overlap, Overlap::WITH_PREVIOUS);
      EXPECT_TRUE(op.forward() && ops[i + 1].pass == Pass::BACKWARD && op.chunk != ops[i + 1].chunk);
    }
  }
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(forwards[c], first[c] + count) << "device " << device << " chunk " << c;
    EXPECT_EQ(inputs[c], first[c] + count) << "device " << device << " chunk " << c;
  }
  EXPECT_EQ(splits, weights);
}

} // namespace cs::testing
