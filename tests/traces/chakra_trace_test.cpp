// Chakra execution traces: the protobuf and JSON forms of one graph read alike, ASTRA-sim's synthetic .et reads,
// start times come through, and truncated, corrupt or contradictory traces are refused with a position.
#include "base/input_error.hpp"
#include "traces/chakra_trace.hpp"

#include "chakra_et.pb.h"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>
#include <map>

namespace fs = std::filesystem;

namespace {

using cs::testing::write_temp;

std::string sample(const std::string& rel) { return std::string(CS_SOURCE_DIR) + "/traces/samples/chakra/" + rel; }

// An .et stream: the metadata, then each node, every message after its varint length.
std::string et_stream(const std::vector<cs::chakra::Node>& nodes)
{
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    cs::chakra::GlobalMetadata meta;
    meta.set_version("0.0.4");
    coded.WriteVarint32(static_cast<std::uint32_t>(meta.ByteSizeLong()));
    meta.SerializeToCodedStream(&coded);
    for (const auto& n : nodes) {
      coded.WriteVarint32(static_cast<std::uint32_t>(n.ByteSizeLong()));
      n.SerializeToCodedStream(&coded);
    }
  }
  return out;
}

cs::chakra::Node node(std::uint64_t id, std::uint64_t micros, std::vector<std::uint64_t> deps, bool cpu = false)
{
  cs::chakra::Node n;
  n.set_id(id);
  n.set_name("op" + std::to_string(id));
  n.set_type(4);
  n.set_duration_micros(micros);
  for (auto d : deps)
    n.add_data_deps(d);
  auto* a = n.add_attr();
  a->set_name("is_cpu_op");
  a->set_bool_val(cpu);
  return n;
}

std::string refusal(const std::string& name, const std::string& bytes)
{
  const fs::path p = write_temp(name, bytes);
  try {
    const auto t = cs::read_chakra(p.string());
    cs::chakra_order(t);
  } catch (const cs::InputError& e) {
    fs::remove(p);
    return e.where();
  }
  fs::remove(p);
  return "accepted";
}

} // namespace

TEST(ChakraTrace, TheProtobufAndJsonFormsOfOneGraphReadAlike)
{
  const cs::ChakraTrace et = cs::read_chakra(sample("chakra.0.et.gz"));
  const cs::ChakraTrace js = cs::read_chakra(sample("chakra.0.json.gz"));
  EXPECT_EQ(et.form, "protobuf");
  EXPECT_EQ(et.schema, "1.0.1");
  EXPECT_EQ(js.form, "json");
  ASSERT_EQ(et.nodes.size(), 3664u);
  ASSERT_EQ(js.nodes.size(), et.nodes.size());
  std::map<std::uint64_t, const cs::ChakraNode*> by_id;
  for (const auto& n : js.nodes)
    by_id[n.id] = &n;
  int cpu = 0, kernels = 0, collectives = 0, sized = 0, with_tid = 0;
  for (const auto& n : et.nodes) {
    ASSERT_TRUE(by_id.count(n.id)) << n.id;
    const auto& j = *by_id[n.id];
    EXPECT_EQ(n.type, j.type) << n.id;
    EXPECT_EQ(n.cpu, j.cpu) << n.id;
    EXPECT_DOUBLE_EQ(n.duration, j.duration) << n.id;
    EXPECT_EQ(n.deps, j.deps) << n.id;
    cpu += n.cpu;
    kernels += !n.cpu && n.type == cs::ChakraNode::COMPUTE;
    collectives += !n.cpu && n.type == cs::ChakraNode::COLLECTIVE;
    sized += n.comm_bytes > 0;
    with_tid += n.tid >= 0;
  }
  EXPECT_EQ(cpu, 2448);
  EXPECT_EQ(kernels, 1209);
  EXPECT_EQ(collectives, 7); // 5 NCCL all-reduces and 2 broadcasts
  EXPECT_EQ(sized, 7);       // only the protobuf form carries comm_size
  EXPECT_EQ(with_tid, 3664);
  EXPECT_EQ(cs::chakra_order(et).size(), et.nodes.size());
}

TEST(ChakraTrace, AstraSimSyntheticTracesAndStartTimesRead)
{
  const auto t = cs::read_chakra(sample("astra-sim-all_reduce-4npus_1MB/all_reduce.2.et"));
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.schema, "0.0.4");
  EXPECT_EQ(t.nodes[0].type, cs::ChakraNode::COLLECTIVE);
  EXPECT_EQ(t.nodes[0].comm_type, 0);
  EXPECT_EQ(t.nodes[0].comm_bytes, 1048576.0);
  EXPECT_EQ(t.nodes[0].duration, 0.0);

  auto a = node(10, 300, {});
  a.set_start_time_micros(1000);
  auto b = node(11, 200, {10, 99}); // 99 is not in the trace: left out and counted
  b.set_start_time_micros(1300);
  const fs::path p = write_temp("start.et", et_stream({b, a}));
  const auto s = cs::read_chakra(p.string());
  fs::remove(p);
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_EQ(s.dropped_deps, 1);
  EXPECT_DOUBLE_EQ(s.nodes[1].start, 1e-3);
  EXPECT_EQ(cs::chakra_order(s), (std::vector<std::size_t>{1, 0})); // a dependency first, whatever the file order
}

TEST(ChakraTrace, MalformedTracesAreRefusedWithAPosition)
{
  const std::string good = et_stream({node(1, 5, {}), node(2, 5, {1})});
  EXPECT_NE(refusal("cut.et", good.substr(0, good.size() - 3)).find("message 2 at byte"), std::string::npos);
  EXPECT_NE(refusal("junk.et", std::string("\x05\xff\xff\xff\xff\xff", 6)).find("message 0"), std::string::npos);
  EXPECT_NE(refusal("twice.et", et_stream({node(1, 5, {}), node(1, 5, {})})).find("node id 1 appears twice"),
            std::string::npos);
  EXPECT_NE(refusal("cycle.et", et_stream({node(1, 5, {2}), node(2, 5, {1})})).find("cycle"), std::string::npos);
  EXPECT_NE(refusal("long.et", et_stream({node(1, 2'000'000'000'000'000ull, {})})).find("duration out of range"),
            std::string::npos);
  EXPECT_NE(refusal("empty.et", et_stream({})).find("no nodes"), std::string::npos);
  // The JSON form: syntax errors and bad fields at their line and column.
  EXPECT_NE(refusal("syntax.json", "{\"workload_graph\": [\n  {\"Id\": 1,}\n]}").find(":2:"), std::string::npos);
  const std::string bad_runtime =
      "{\"workload_graph\": [\n {\"Id\": 1, \"runtime\": 3},\n {\"Id\": 2,\n  \"runtime\": -4}\n]}";
  EXPECT_NE(refusal("runtime.json", bad_runtime).find(":4:3: at workload_graph/1/runtime: out of range"),
            std::string::npos)
      << refusal("runtime.json", bad_runtime);
  EXPECT_NE(refusal("deps.json", "{\"workload_graph\": [{\"Id\": 1, \"data_deps\": \"2\"}]}").find("node ids"),
            std::string::npos);
  EXPECT_NE(refusal("noid.json", "{\"workload_graph\": [{\"Name\": \"x\"}]}").find("node id"), std::string::npos);
  EXPECT_NE(refusal("shape.json", "{\"nodes\": []}").find("workload_graph"), std::string::npos);
}

TEST(ChakraTrace, StartTimesFromTheUnixEpochAndAnEtStartingWithABraceRead)
{
  // PyTorch may stamp nodes in microseconds since the epoch (1.7e15 us in 2024).
  auto a = node(1, 300, {});
  a.set_start_time_micros(1'733'000'000'000'000ull);
  const fs::path p = write_temp("epoch.et", et_stream({a}));
  const auto t = cs::read_chakra(p.string());
  fs::remove(p);
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_NEAR(t.nodes[0].start, 1'733'000'000.0, 1e-3);
  // A GlobalMetadata of 123 bytes makes the stream start with '{': the .et name says it is protobuf.
  cs::chakra::GlobalMetadata meta;
  meta.set_version(std::string(121, 'v')); // tag (1 byte) + length (1 byte) + 121 = 123
  std::string brace;
  {
    google::protobuf::io::StringOutputStream raw(&brace);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.WriteVarint32(static_cast<std::uint32_t>(meta.ByteSizeLong()));
    meta.SerializeToCodedStream(&coded);
    coded.WriteVarint32(static_cast<std::uint32_t>(a.ByteSizeLong()));
    a.SerializeToCodedStream(&coded);
  }
  ASSERT_EQ(brace[0], '{');
  const fs::path q = write_temp("brace.et", brace);
  const auto u = cs::read_chakra(q.string());
  fs::remove(q);
  EXPECT_EQ(u.nodes.size(), 1u);
}

TEST(ChakraTrace, FormatsAreToldApart)
{
  EXPECT_TRUE(cs::looks_like_chakra(sample("chakra.0.et.gz")));
  EXPECT_TRUE(cs::looks_like_chakra(sample("chakra.0.json.gz")));
  EXPECT_TRUE(cs::looks_like_chakra(sample("small_chakra.0.json")));
  EXPECT_FALSE(cs::looks_like_chakra(std::string(CS_SOURCE_DIR) + "/traces/samples/kineto/nccl_data.json.gz"));
}
