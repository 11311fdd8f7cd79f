// The JSON document builder: the same document nlohmann builds, a top-level array streamed item by item, and every
// malformed input refused at its line and column.
#include "base/input_error.hpp"
#include "base/json_document.hpp"

#include <gtest/gtest.h>

namespace {

std::string refusal(const std::string& text, const std::string& streamed = "")
{
  try {
    cs::build_json_document(text, "F", streamed, [](nlohmann::json&&, std::size_t) {});
  } catch (const cs::InputError& e) {
    return e.where();
  }
  return "accepted";
}

} // namespace

TEST(JsonDocument, BuildsWhatNlohmannBuilds)
{
  const std::string text = R"({"a": [1, 2.5, -3, true, null, "x", {"b": [[], {}]}], "c": {"d": 18446744073709551615}})";
  EXPECT_EQ(cs::build_json_document(text, "F"), nlohmann::json::parse(text));
  EXPECT_EQ(cs::build_json_document("7", "F"), nlohmann::json(7));
}

TEST(JsonDocument, AStreamedArraysItemsGoToTheSinkInOrderAndAreNotKept)
{
  const std::string text =
      R"({"head": 1, "events": [{"i": 0}, [1], 2, {"i": {"deep": [3]}}], "tail": {"events": [9]}})";
  std::vector<nlohmann::json> seen;
  std::vector<std::size_t> index;
  const auto doc = cs::build_json_document(text, "F", "events", [&](nlohmann::json&& item, std::size_t i) {
    seen.push_back(std::move(item));
    index.push_back(i);
  });
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], nlohmann::json::parse(R"({"i": 0})"));
  EXPECT_EQ(seen[3], nlohmann::json::parse(R"({"i": {"deep": [3]}})"));
  EXPECT_EQ(index, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(doc["events"], nlohmann::json::array());
  EXPECT_EQ(doc["head"], 1);
  EXPECT_EQ(doc["tail"]["events"], nlohmann::json::array({9})); // only the top level's array is streamed
}

TEST(JsonDocument, MalformedInputIsRefusedAtItsPosition)
{
  EXPECT_EQ(refusal("{\"a\": [1,\n  2,, 3]}").substr(0, 5), "F:2:5");
  EXPECT_NE(refusal("{\"a\": [1, 2").find("malformed JSON"), std::string::npos);
  EXPECT_NE(refusal("{\"a\": 1e400}").find("F:1:7: number 1e400 is beyond the range of a double"), std::string::npos);
  // A repeated key inside a streamed item is found too, at its second occurrence.
  EXPECT_NE(refusal("{\"e\": [{\"k\": 1,\n \"k\": 2}]}", "e").find("F:2:2: key 'k' appears twice in one object"),
            std::string::npos);
  EXPECT_NE(
      refusal(std::string(300, '[') + std::string(300, ']')).find("F:1:201: arrays and objects nest more than 200"),
      std::string::npos);
  EXPECT_NE(refusal("").find("malformed JSON"), std::string::npos);
}

TEST(JsonDocument, WhatTheSinkThrowsReachesTheCaller)
{
  EXPECT_THROW(cs::build_json_document("{\"e\": [1, 2]}", "F", "e",
                                       [](nlohmann::json&&, std::size_t i) {
                                         if (i == 1)
                                           throw cs::InputError("F", 1, 1, "second item refused");
                                       }),
               cs::InputError);
}
