#include "models/devices/device_catalog.hpp"

#include <gtest/gtest.h>

TEST(DeviceCatalog, ShipsTheIssueDevicesWithSources)
{
  const auto& cat = cs::DeviceCatalog::builtin();
  for (const char* name : {"v100-sxm2", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5", "h200-sxm", "h800-sxm5",
                           "b200", "gb200", "rtx-4090", "cpu-node"}) {
    const cs::DeviceSpec* d = cat.find(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_GT(d->memory_bandwidth, 0) << name;
    EXPECT_GT(d->memory_bytes, 0) << name;
    for (const char* field : {"memory_bandwidth", "memory", "peak_tflops"})
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
  // The frontier devices: H800's NVLink cut to 8 links, Blackwell's doubled, GB200 NVL72's per-GPU share.
  const auto& h800 = *cat.find("h800-sxm5");
  EXPECT_DOUBLE_EQ(h800.peak("bf16"), h100.peak("bf16"));
  EXPECT_DOUBLE_EQ(h800.nvlink_bandwidth, 200e9);
  EXPECT_DOUBLE_EQ(h800.nvlink_achievable, 8 * 20.6e9);
  EXPECT_FALSE(h800.nvls);
  const auto& b200 = *cat.find("b200");
  EXPECT_DOUBLE_EQ(b200.peak("bf16"), 2250e12);
  EXPECT_DOUBLE_EQ(b200.peak("fp8"), 4500e12);
  EXPECT_DOUBLE_EQ(b200.memory_bandwidth, 8000e9);
  EXPECT_DOUBLE_EQ(b200.nvlink_bandwidth, 900e9);
  EXPECT_DOUBLE_EQ(b200.nvls_efficiency, 0.74);
  EXPECT_DOUBLE_EQ(h100.nvls_efficiency, 0.85);
  const auto& gb200 = *cat.find("gb200");
  EXPECT_DOUBLE_EQ(gb200.peak("bf16"), 2500e12);
  EXPECT_DOUBLE_EQ(gb200.memory_bytes, 186e9);
  for (const auto* d : {&h800, &b200, &gb200})
    for (const char* field : {"nvlink", "nvlink_achievable", "sms", "pcie", "nvls"})
      EXPECT_TRUE(d->sources.count(field)) << d->name << " lacks a source for " << field;
}
