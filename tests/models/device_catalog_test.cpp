#include "models/cost/device_profile.hpp"
#include "models/devices/device_catalog.hpp"

#include <array>
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
  EXPECT_DOUBLE_EQ(b200.memory_bandwidth, 7672e9); // as the device reports it (pytorch/ao#4002), not 8 TB/s
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

TEST(DeviceCatalog, MemoryIsWhatTheDevicesReport)
{
  // nvidia-smi's memory.total, not the datasheet's "80 GB" read as 10^9 bytes (74.5 GiB for an H100 that has 79.6).
  const auto& cat = cs::DeviceCatalog::builtin();
  const double mib = 1024.0 * 1024;
  EXPECT_DOUBLE_EQ(cat.find("h100-sxm5")->memory_bytes, 81559 * mib);
  EXPECT_DOUBLE_EQ(cat.find("h200-sxm")->memory_bytes, 143771 * mib);
  EXPECT_DOUBLE_EQ(cat.find("a100-sxm4-80gb")->memory_bytes, 81920 * mib);
  EXPECT_DOUBLE_EQ(cat.find("b200")->memory_bytes, 183359 * mib);
}

TEST(DeviceCatalog, BlackwellGemmSharesComeFromTheMatmulTable)
{
  // stas00's Maximum Achievable Matmul FLOPS, the table the H100's 16-bit share (794.5 of 989) comes from.
  const std::pair<const char*, std::array<double, 4>> rows[] = {{"b200", {1745.0, 2250, 3432.5, 4500}},
                                                                {"gb200", {1822.0, 2500, 3615.6, 5000}}};
  for (const auto& [name, t] : rows) {
    const cs::DeviceProfile* p = cs::builtin_profile(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_NEAR(p->compute_efficiency.at("bf16"), t[0] / t[1], 1e-4) << name;
    EXPECT_NEAR(p->compute_efficiency.at("fp8"), t[2] / t[3], 1e-4) << name;
  }
}

TEST(DeviceCatalog, ProfilesOfTheSameDieCarryEveryKernelTheirParentPrices)
{
  // The H800 and the 500 W HBM2e H100 are GH100 dies whose profiles were copied from the H100 SXM's ("as h100-sxm5").
  // A kernel the parent gains a rate for must reach them too (on 2026-12-05 the FP8 cast-transpose reached the H800
  // but not the 500 W variant, which went on casting at its copy rate). A rate may differ; a missing one may not.
  const cs::DeviceProfile& parent = *cs::builtin_profile("h100-sxm5");
  for (const char* name : {"h800-sxm5", "h100-96gb-500w"}) {
    const cs::DeviceProfile& p = *cs::builtin_profile(name);
    for (const auto& [kernel, share] : parent.memory_efficiency_by_kernel)
      EXPECT_TRUE(p.memory_efficiency_by_kernel.count(kernel)) << name << " has no rate for " << kernel;
    for (const auto& [scaling, rate] : parent.gemm_scaling_rate)
      EXPECT_TRUE(p.gemm_scaling_rate.count(scaling)) << name << " has no rate for " << scaling;
    for (const auto& [field, source] : parent.sources)
      EXPECT_TRUE(p.sources.count(field)) << name << " has no source for " << field;
  }
}
