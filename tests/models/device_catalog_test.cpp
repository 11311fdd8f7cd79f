#include "models/devices/device_catalog.hpp"

#include <gtest/gtest.h>

TEST(DeviceCatalog, ShipsTheIssueDevicesWithSources)
{
  const auto& cat = cs::DeviceCatalog::builtin();
  for (const char* name :
       {"v100-sxm2", "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5", "h200-sxm", "rtx-4090", "cpu-node"}) {
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
}
