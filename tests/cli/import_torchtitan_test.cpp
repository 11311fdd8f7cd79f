// clustersim import of torchtitan configurations: which switches turn Float8 (or MX) training on, read as the releases
// that wrote them meant them.
#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/transformer.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/cli/import_run.hpp"
#include "tests/test_support.hpp"
#include "workloads/training/training_workload.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace {

// The FP8 recipe an imported scenario runs ("" for none).
std::string fp8_of(const std::filesystem::path& scenario)
{
  const cs::Scenario s = cs::load_scenario(scenario.string(), {});
  const auto& fp8 = cs::workload_as<cs::TrainingWorkload>(s).params.model.fp8;
  return fp8 ? fp8->name() : "";
}

// torchtitan's llama3_8b.toml of 2025: a [float8] table of settings and the converter that would use them commented
// out, as the repository ships it. `model_extra` goes at the end of [model].
std::string titan_llama3_8b(const std::string& model_extra)
{
  return "[model]\nname = \"llama3\"\nflavor = \"8B\"\n# converters = \"float8\"\n" + model_extra +
         "\n[training]\nlocal_batch_size = 2\nseq_len = 8192\n"
         "[float8]\nenable_fsdp_float8_all_gather = false\nprecompute_float8_dynamic_scale_for_fsdp = false\n"
         "filter_fqns = \"output\"\n";
}

cs::testing::ImportResult import_titan_toml(const std::string& name, const std::string& text,
                                            const std::string& options)
{
  return cs::testing::import_file(cs::testing::write_temp(name + ".toml", text).string(), options);
}

} // namespace

TEST(ImportTorchtitan, Float8IsWhatAConverterOrTheOldSwitchTurnsOnNotTheSettingsTable)
{
  // As shipped: the settings are there, Float8 is off, and they are named as changing nothing.
  const auto off = import_titan_toml("shipped", titan_llama3_8b(""), "--gpus 8");
  ASSERT_EQ(off.r.code, 0) << off.r.err;
  EXPECT_EQ(fp8_of(off.file), "");
  EXPECT_NE(off.r.err.find("float8.enable_fsdp_float8_all_gather (Float8 training is off)"), std::string::npos)
      << off.r.err;
  EXPECT_NE(off.r.err.find("float8.filter_fqns (Float8 training is off)"), std::string::npos) << off.r.err;
  // The converter as a string, in a list, under its later dotted name; the 2024 switch.
  for (const char* on : {"converters = \"float8\"", "converters = [\"float8\"]",
                         "converters = [\"quantize.linear.float8\"]", "converters = \"foo, float8\""}) {
    const auto i = import_titan_toml("on", titan_llama3_8b(on), "--gpus 8");
    ASSERT_EQ(i.r.code, 0) << on << ": " << i.r.err;
    EXPECT_EQ(fp8_of(i.file), "tensorwise") << on;
    EXPECT_EQ(i.r.err.find("filter_fqns"), std::string::npos) << i.r.err; // the output layer stays bf16 either way
  }
  const auto old = import_titan_toml("switch", titan_llama3_8b("") + "enable_float8_linear = true\n", "--gpus 8");
  ASSERT_EQ(old.r.code, 0) << old.r.err;
  EXPECT_EQ(fp8_of(old.file), "tensorwise");
  // MX: the MXFP8 recipe, which a Blackwell runs and a Hopper refuses (nothing written).
  const auto mx = import_titan_toml("mx", titan_llama3_8b("converters = [\"mx\"]"), "--gpus 8 --device b200");
  ASSERT_EQ(mx.r.code, 0) << mx.r.err;
  EXPECT_EQ(fp8_of(mx.file), "mxfp8");
  const auto hopper = import_titan_toml("mx_h100", titan_llama3_8b("converters = [\"mx\"]"), "--gpus 8");
  EXPECT_EQ(hopper.r.code, 2) << hopper.r.err;
  EXPECT_NE(hopper.r.err.find("Blackwell"), std::string::npos) << hopper.r.err;
  EXPECT_FALSE(std::filesystem::exists(hopper.file));
  // Not a name or a list of names: the value's position.
  const auto bad = import_titan_toml("bad", titan_llama3_8b("converters = 3"), "--gpus 8");
  EXPECT_EQ(bad.r.code, 2) << bad.r.err;
  EXPECT_NE(bad.r.err.find(":5:14: [model] converters is a name or a list of names"), std::string::npos) << bad.r.err;
  const auto bad_entry = import_titan_toml("bad_entry", titan_llama3_8b("converters = [\"float8\", 2]"), "--gpus 8");
  EXPECT_EQ(bad_entry.r.code, 2) << bad_entry.r.err;
  EXPECT_NE(bad_entry.r.err.find(":5:25: [model] converters lists names (strings)"), std::string::npos)
      << bad_entry.r.err;
}
