#include "models/cost/roofline.hpp"
#include "models/device_catalog.hpp"

#include <gtest/gtest.h>

TEST(DeviceCatalog, ShipsTheIssueDevicesWithSources)
{
  const auto& cat = cs::DeviceCatalog::builtin();
  for (const char* name : {"v100-sxm2", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5", "h200-sxm", "rtx-4090", "cpu-node"}) {
    const cs::DeviceSpec* d = cat.find(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_GT(d->memory_bandwidth, 0) << name;
    EXPECT_GT(d->memory_bytes, 0) << name;
    for (const char* field : {"memory_bandwidth", "memory", "compute_efficiency", "memory_efficiency", "launch_overhead"})
      EXPECT_TRUE(d->sources.count(field)) << name << " lacks a source for " << field;
  }
}

TEST(DeviceCatalog, DatasheetNumbersMatchTheReference)
{
  const auto& cat = cs::DeviceCatalog::builtin();
  const auto& h100 = *cat.find("h100-sxm5");
  EXPECT_DOUBLE_EQ(h100.peak("bf16"), 989.4e12);
  EXPECT_DOUBLE_EQ(h100.memory_bandwidth, 3350e9);
  EXPECT_EQ(h100.sms, 132);
  EXPECT_DOUBLE_EQ(h100.nvlink_bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(cat.find("h200-sxm")->memory_bandwidth, 4800e9);
  EXPECT_DOUBLE_EQ(cat.find("a100-sxm4-80gb")->peak("fp16"), 312e12);
  EXPECT_DOUBLE_EQ(cat.find("v100-sxm2")->peak("bf16"), 0.0);
  EXPECT_EQ(cat.find("a100-sxm4-40gb")->sms, 108);
}

TEST(Roofline, ComputeAndMemoryBound)
{
  const auto& h100 = *cs::DeviceCatalog::builtin().find("h100-sxm5");
  // 8192^3 bf16 GEMM: 1.1 TFLOP at 989.4 x 0.803 TFLOP/s, compute bound.
  cs::KernelWork gemm{"gemm", 2.0 * 8192 * 8192 * 8192, 3.0 * 8192 * 8192 * 2, "bf16"};
  auto b = cs::roofline_cost(h100, gemm);
  EXPECT_TRUE(b.compute_bound());
  EXPECT_EQ(b.model, "roofline");
  EXPECT_NEAR(b.total, 2.31e-6 + gemm.flops / (989.4e12 * 0.803), 1e-12);
  // 1 GiB copy (read + write): memory bound at 3350 x 0.887 GB/s.
  cs::KernelWork copy{"copy", 0, 2.0 * 1073741824.0, "bf16"};
  auto c = cs::roofline_cost(h100, copy);
  EXPECT_FALSE(c.compute_bound());
  EXPECT_NEAR(c.total, 2.31e-6 + copy.bytes / (3350e9 * 0.887), 1e-12);
  EXPECT_THROW(cs::roofline_cost(*cs::DeviceCatalog::builtin().find("v100-sxm2"), gemm), std::invalid_argument);
}
