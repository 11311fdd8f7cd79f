// Token dispatchers: each one's traffic matrix from a routing's (token, expert) copies, DeepEP's deduplication and
// node limit by the documented expectation, and a run on each: DeepEP moves fewer bytes between nodes, the permutation
// fused away, and bad settings refused at their key.
#include "models/moe/token_dispatcher.hpp"
#include "models/transformer/moe_params.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>
#include <numeric>

namespace {

using cs::testing::src;

// Two nodes of two EP ranks, 4 experts (one per rank), top-2; every rank sends 100 bytes to every rank.
cs::DispatchGroup two_nodes(int max_nodes = 0) { return {4, {0, 0, 1, 1}, 4, 2, max_nodes}; }
const std::vector<double> kEven(16, 100.0);

double inter_node(const std::vector<double>& m, const cs::DispatchGroup& g)
{
  double sum = 0;
  for (int i = 0; i < g.ranks; ++i)
    for (int j = 0; j < g.ranks; ++j)
      sum += g.machine[i] != g.machine[j] ? m[i * g.ranks + j] : 0.0;
  return sum;
}

// The report of scenarios/moe-mixtral.yaml run with `dispatcher`.
nlohmann::json mixtral_report(const std::string& dispatcher)
{
  const auto out = cs::testing::fresh_dir("dispatcher_" + dispatcher);
  const auto r = cs::testing::run_clustersim("run " + src("scenarios/moe-mixtral.yaml") +
                                             " --quiet --set workload.model.moe.dispatcher=" + dispatcher + " --out " +
                                             out.string());
  EXPECT_EQ(r.code, 0) << r.err;
  return cs::testing::read_json(out / "report.json");
}

} // namespace

TEST(TokenDispatcher, AllToAllSendsEveryRoutedCopyAndAllGatherEveryTokenOnce)
{
  EXPECT_EQ(cs::token_dispatcher("alltoall").traffic(kEven, two_nodes()), kEven);
  // A rank's 400 bytes of copies are 200 bytes of tokens at top-2: each rank gathers them all, whatever the routing.
  std::vector<double> skewed(16, 0.0);
  skewed[0 * 4 + 1] = 400; // rank 0 routes everything to rank 1
  const auto g = cs::token_dispatcher("allgather").traffic(skewed, two_nodes());
  for (int j = 0; j < 4; ++j)
    EXPECT_DOUBLE_EQ(g[0 * 4 + j], 200.0) << j;
  EXPECT_DOUBLE_EQ(std::accumulate(g.begin() + 4, g.end(), 0.0), 0.0); // ranks 1-3 routed nothing
  EXPECT_FALSE(cs::token_dispatcher("alltoall").fuses_permutation());
  EXPECT_TRUE(cs::token_dispatcher("deepep").fuses_permutation());
}

TEST(TokenDispatcher, DeepEpSendsATokenOncePerNodeToTheSendersRailAndForwardsIt)
{
  const auto& deepep = cs::token_dispatcher("deepep");
  const auto g = two_nodes();
  const auto m = deepep.traffic(kEven, g);
  // A node holds 2 of the 4 experts: a top-2 token picks one of them with probability 1 - C(2,2)/C(4,2) = 5/6
  // against 1 copy on average, so 5/6 of the copies cross; one GPU holds 1: 1 - C(3,2)/C(4,2) = 1/2 against 1/2.
  EXPECT_NEAR(inter_node(m, g), inter_node(kEven, g) * 5.0 / 6.0, 1e-9);
  EXPECT_DOUBLE_EQ(m[0 * 4 + 3], 0.0);                // rank 0 reaches node 1 through its rail peer, rank 2
  EXPECT_NEAR(m[0 * 4 + 2], 200.0 * 5.0 / 6.0, 1e-9); // both of node 1's shares, once
  EXPECT_NEAR(m[2 * 4 + 3], 100.0 + 100.0, 1e-9);     // rank 2 forwards 0's copies for 3 and sends its own
  EXPECT_NEAR(m[1 * 4 + 3], 200.0 * 5.0 / 6.0, 1e-9); // rank 1's rail on node 1 is rank 3
  // Node-limited routing to 1 of the 2 nodes: a token reaches the other node at most half the time.
  EXPECT_NEAR(inter_node(deepep.traffic(kEven, two_nodes(1)), g), inter_node(kEven, g) * 0.5, 1e-9);
}

TEST(TokenDispatcher, DeepEpMovesLessBetweenNodesAndTheRunIsFaster)
{
  const auto a2a = mixtral_report("alltoall"), deepep = mixtral_report("deepep"),
             allgather = mixtral_report("allgather");
  const auto inter = [](const nlohmann::json& r) { return r["metrics"].value("network_bytes_inter_node", -1.0); };
  const auto step = [](const nlohmann::json& r) { return r["metrics"].value("iteration_time_s", -1.0); };
  EXPECT_LT(inter(deepep), inter(a2a));
  EXPECT_LT(step(deepep), step(a2a));
  EXPECT_GT(inter(allgather), inter(a2a)); // top-2 of 8: every token to every rank is more than its two copies
}

TEST(TokenDispatcher, BadSettingsAreRefusedAtTheirKey)
{
  auto refused = [](const std::string& set, const std::string& words) {
    const auto r = cs::testing::run_clustersim("validate " + src("scenarios/moe-mixtral.yaml") + " --set " + set);
    EXPECT_EQ(r.code, 2) << set;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
  };
  refused("workload.model.moe.dispatcher=nccl",
          "unknown dispatcher 'nccl' (expected one of: allgather, alltoall, deepep, hybridep)");
  refused("workload.model.moe.max_nodes_per_token=3", "max_nodes_per_token = 3 but an EP group spans 2 node(s)");
  refused("workload.model.moe.max_nodes_per_token=-1", "max_nodes_per_token");
}

TEST(TokenDispatcher, HybridEpMovesWhatDeepEpMovesOnFewerSms)
{
  // HybridEP forwards as DeepEP's normal kernels do (RDMA once per node, then NVLink), the permutation fused; what
  // differs is the SMs its kernels take (Megatron-Core's moe_hybridep_num_sms, 16 by default, against DeepEP's 20).
  const auto& hybrid = cs::token_dispatcher("hybridep");
  for (int limit : {0, 1})
    EXPECT_EQ(hybrid.traffic(kEven, two_nodes(limit)), cs::token_dispatcher("deepep").traffic(kEven, two_nodes(limit)))
        << limit;
  EXPECT_TRUE(hybrid.fuses_permutation());
  EXPECT_DOUBLE_EQ(hybrid.sm_share(0.15, 16, 132), 16.0 / 132.0);
  EXPECT_DOUBLE_EQ(hybrid.sm_share(0.15, 16, 0), 0.15); // no device: the framework's share
  cs::MoeParams moe;
  moe.dispatcher = "hybridep";
  EXPECT_EQ(moe.dispatcher_sms(), 16);
  moe.dispatcher = "deepep";
  EXPECT_EQ(moe.dispatcher_sms(), 20);
  // A run with it moves DeepEP's bytes, and refuses a node without NVLink as DeepEP does.
  EXPECT_DOUBLE_EQ(mixtral_report("hybridep")["metrics"].value("network_bytes_inter_node", -1.0),
                   mixtral_report("deepep")["metrics"].value("network_bytes_inter_node", -2.0));
  const auto r = cs::testing::run_clustersim("validate " + src("scenarios/moe-mixtral.yaml") +
                                             " --set workload.model.moe.dispatcher=hybridep --set "
                                             "cluster.intra_node.kind=pcie");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("the hybridep dispatcher forwards tokens over NVLink inside a node"), std::string::npos)
      << r.err;
  const auto zero = cs::testing::run_clustersim("validate " + src("scenarios/moe-mixtral.yaml") +
                                                " --set workload.model.moe.hybridep_sms=0");
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("hybridep_sms"), std::string::npos) << zero.err;
}

TEST(TokenDispatcher, HybridEpSizesItsBuffersForEveryTokenOfTheGroup)
{
  // Qwen3-30B-A3B's EP 16 over two nodes (hidden 2,048 in bf16, 4,096 tokens a rank, 8 experts a rank): the NVLink
  // side's dispatch and combine buffers for the group's 65,536 tokens (each with 4,096 bytes of values, 256 of
  // probabilities over the node's 64 experts and 64 of scales), 574,619,648 bytes; the RDMA side's own tokens
  // staged and one node's worth each way, 72,876,032.
  cs::DispatchBufferShape s{
      .ranks = 16, .gpus_per_node = 8, .hidden = 2048, .hidden_bytes = 4096, .tokens = 4096, .experts_per_rank = 8};
  const auto& hybrid = cs::token_dispatcher("hybridep");
  EXPECT_DOUBLE_EQ(hybrid.buffer_bytes(s), 574619648.0 + 72876032.0);
  // On one node the dispatch and the combine share their buffers, and there is no RDMA side.
  s.ranks = 8;
  EXPECT_DOUBLE_EQ(hybrid.buffer_bytes(s), 32768.0 * 64 + 32768.0 * (4096 + 256));
  s.ranks = 1;
  EXPECT_DOUBLE_EQ(hybrid.buffer_bytes(s), 0.0);
}

TEST(TokenDispatcher, DeepEpKeepsItsQueuesAllocatedAsItsSizeHintsSay)
{
  // DeepEP's size hints (csrc/config.hpp) for DeepSeek-V3's hidden 7168 in bf16 (14,336 bytes), 20 SMs (10 channels):
  // EP 64 over 8 nodes, NVLink queues of 288 tokens and RDMA queues of 128 (deep_ep/buffer.py's config for 64 ranks),
  // each token with 2,056 bytes of metadata, the RDMA side doubled plus 1 MiB: 377,677,824 + 337,095,936 bytes.
  const auto& deepep = cs::token_dispatcher("deepep");
  auto shape = [](int ranks) {
    return cs::DispatchBufferShape{
        .ranks = ranks, .gpus_per_node = 8, .hidden = 7168, .hidden_bytes = 14336, .sms = 20};
  };
  EXPECT_DOUBLE_EQ(deepep.buffer_bytes(shape(64)), 714773760.0);
  // One node: the NVLink queues alone (256 tokens deep for 8 ranks).
  EXPECT_DOUBLE_EQ(deepep.buffer_bytes(shape(8)), 335709824.0);
  // A size DeepEP lists no config for takes the next listed one's depths (48 ranks: 64's).
  EXPECT_DOUBLE_EQ(deepep.buffer_bytes(shape(48)), 630760704.0);
  EXPECT_DOUBLE_EQ(deepep.buffer_bytes(shape(1)), 0.0);
  // NCCL's all-to-all keeps no buffers of the dispatcher's own (the memory reserve covers NCCL's).
  EXPECT_DOUBLE_EQ(cs::token_dispatcher("alltoall").buffer_bytes(shape(64)), 0.0);
}
