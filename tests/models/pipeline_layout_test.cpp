// Megatron-Core's pipeline layout string: parsed as Megatron's documentation writes it, refused with the character
// where it goes wrong, and run as the same stages written as stage_layers.
#include "models/parallel/pipeline_layout.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>

namespace fs = std::filesystem;

TEST(MegatronLayoutString, ReadsMegatronsDeepSeekV3Example)
{
  // Megatron-Core's documented DeepSeek-V3 layout on PP 16 x VPP 2: the embedding and 3 layers, 29 stages of 2, the
  // MTP layer, the loss.
  const cs::PipelineLayout l = cs::parse_pipeline_layout("Et*3|(tt|)*29,m|L");
  ASSERT_EQ(l.stages(), 32);
  EXPECT_EQ(l.layers.front(), 3);
  for (int s = 1; s <= 29; ++s)
    EXPECT_EQ(l.layers[s], 2) << s;
  EXPECT_EQ(l.layers[30], 0);
  EXPECT_EQ(l.mtp[30], 1);
  EXPECT_EQ(l.layers[31], 0);
  EXPECT_EQ(l.embedding_stage, 0);
  EXPECT_EQ(l.loss_stage, 31);
  // Repeats of symbols and nested groups, spaces and commas for reading.
  const cs::PipelineLayout nested = cs::parse_pipeline_layout("E, t*2 | ((t|)*2)*2 tL");
  EXPECT_EQ(nested.layers, (std::vector<int>{2, 1, 1, 1, 1, 1}));
}

TEST(MegatronLayoutString, MalformedLayoutsSayWhere)
{
  const std::vector<std::pair<std::string, std::size_t>> bad{
      {"Et|(tt|*3|L", 3}, // '(' never closed
      {"Et|tt)|L", 5},    // ')' without '('
      {"Et|t*|L", 4},     // '*' without a count
      {"Etx|L", 2},       // unknown symbol
      {"Et|E|tL", 3},     // E twice
      {"Et|tL|L", 6},     // L twice
      {"t|tL", 4},        // no E
      {"Et|t", 4},        // no L
      {"", 0},            // empty
      {"E(t|)*99999999L", 5},
  };
  for (const auto& [text, offset] : bad) {
    try {
      cs::parse_pipeline_layout(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const cs::LayoutError& e) {
      EXPECT_EQ(e.offset(), offset) << text << ": " << e.what();
    }
  }
}

namespace {

double layout_step(const std::string& args)
{
  static int count = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("cs_layout_" + std::to_string(::getpid()) + "_" + std::to_string(++count));
  auto r = cs::testing::run_clustersim("run " + cs::testing::src("bench/scenarios/deepseek-v3-2048-h800.yaml") +
                                       " --quiet --out " + dir.string() + args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  std::ifstream in(dir / "report.json");
  const auto json = nlohmann::json::parse(in, nullptr, false);
  fs::remove_all(dir);
  return json.is_discarded() ? 0.0 : json["metrics"].value("iteration_time_s", 0.0);
}

} // namespace

TEST(MegatronLayoutString, RunsAsTheSameStagesWrittenOut)
{
  // DeepSeek-V3 under DualPipe: each copy's stage_layers [3, 4 x 14, 2] with the MTP module beside the loss.
  const double written = layout_step("");
  const double layout = layout_step(
      " --set 'workload.parallel.stage_layers=[]' --set 'workload.parallel.pipeline_layout=Ettt|(tttt|)*14,ttmL'");
  // Under DualPipeV a layout lists the V's 32 stages: [1, 2 x 30, 0].
  std::string v_stages = "[1";
  for (int i = 0; i < 30; ++i)
    v_stages += ",2";
  v_stages += ",0]";
  const std::string v = " --set policies.pipeline=dualpipev";
  EXPECT_DOUBLE_EQ(
      layout_step(
          v + " --set 'workload.parallel.stage_layers=[]' --set 'workload.parallel.pipeline_layout=Et|(tt|)*30,mL'"),
      layout_step(v + " --set 'workload.parallel.stage_layers=" + v_stages + "'"));
  EXPECT_GT(written, 0);
  EXPECT_DOUBLE_EQ(layout, written);
  // A layout that does not fit the pipeline or the model: exit 2 at the key, nothing written.
  const fs::path dir = fs::temp_directory_path() / ("cs_layout_bad_" + std::to_string(::getpid()));
  for (const char* bad : {"Ettt|(tttt|)*14,tt|mL", "Ettt|(tttt|)*14,ttL", "t|Ett|(tttt|)*14,ttmL",
                          "Ettt|(tttt|)*13,ttmt|ttL", "Ettt|(tttt|*14,ttmL"}) {
    auto r = cs::testing::run_clustersim("run " + cs::testing::src("bench/scenarios/deepseek-v3-2048-h800.yaml") +
                                         " --set 'workload.parallel.stage_layers=[]' --set "
                                         "'workload.parallel.pipeline_layout=" +
                                         std::string(bad) + "' --out " + dir.string());
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.err;
    EXPECT_NE(r.err.find("pipeline_layout"), std::string::npos) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(":[0-9]+:[0-9]+: "))) << r.err;
    EXPECT_FALSE(fs::exists(dir)) << bad;
  }
}
