// MoE building blocks: presets' published parameter counts, routing models, routing through a placement (capacity,
// padding, locality), the all-to-all-v closed form, and the policies' decisions on hand-made steps.
#include "models/collectives/all_to_all_v.hpp"
#include "models/moe/moe_policy.hpp"
#include "models/moe/moe_routing.hpp"
#include "models/transformer/model_params.hpp"
#include "models/transformer/transformer.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <numeric>

namespace {

double row_sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

cs::RoutingRequest request(int experts, int top_k, int iteration = 0)
{
  cs::RoutingRequest q;
  q.iteration = iteration;
  q.layer = 3;
  q.ranks = 8;
  q.samples_per_rank = 4;
  q.tokens_per_sample = 2048;
  q.experts = experts;
  q.top_k = top_k;
  q.seed = 7;
  return q;
}

// The mean and the sample standard deviation of draws.
double mean_of(const std::vector<double>& v) { return row_sum(v) / v.size(); }
double sd_of(const std::vector<double>& v)
{
  const double m = mean_of(v);
  double ss = 0;
  for (double x : v)
    ss += (x - m) * (x - m);
  return std::sqrt(ss / (v.size() - 1));
}

cs::MoeContext context(int ranks, int experts, double capacity = 0)
{
  cs::MoeContext c;
  c.ranks = ranks;
  c.experts = experts;
  c.top_k = 2;
  c.samples_per_rank = 4;
  c.tokens_per_sample = 2048;
  c.capacity_factor = capacity;
  c.token_bytes = 8192;
  c.hidden = 4096;
  c.expert_parameters = 3.0 * 4096 * 14336;
  c.expert_weight_bytes = 2 * c.expert_parameters;
  c.expert_state_bytes = 16 * c.expert_parameters;
  for (int r = 0; r < ranks; ++r)
    c.machine.push_back(r / 8);
  c.expert_seconds = [](double tokens) { return 1e-3 + tokens * 1e-6; };
  c.alltoall_seconds = [](const std::vector<double>& m) { return std::accumulate(m.begin(), m.end(), 0.0) / 1e11; };
  c.broadcast_seconds = [](double bytes) { return bytes / 1e10; };
  c.move_seconds = [](double bytes) { return bytes / 1e10; };
  return c;
}

} // namespace

TEST(MoePresets, ParameterCountsMatchThePublishedTotals)
{
  // Mixtral (Jiang et al. 2024): 46.7B and 141B; DeepSeekMoE 16B: 16.4B; Qwen2-57B-A14B: 57.4B; Switch-Base-128: 7.4B.
  const std::map<std::string, double> published{{"mixtral-8x7b", 46.7e9},
                                                {"mixtral-8x22b", 141e9},
                                                {"deepseek-moe-16b", 16.4e9},
                                                {"qwen2-57b-a14b", 57.4e9},
                                                {"switch-base-128", 7.4e9}};
  for (const auto& [name, total] : published) {
    const cs::ModelParams& m = cs::model_presets().at(name);
    EXPECT_NEAR(cs::total_parameters(m) / total, 1.0, 0.005) << name << ": " << cs::total_parameters(m);
  }
  // Mixtral's 12.9B active parameters per token: attention, the router and two of the eight experts.
  const cs::ModelParams& mixtral = cs::model_presets().at("mixtral-8x7b");
  double active = cs::embedding_parameters(mixtral) + cs::head_parameters(mixtral);
  for (int l = 0; l < mixtral.layers; ++l)
    active += cs::active_gemm_weights_at(mixtral, l) + 2 * mixtral.hidden;
  EXPECT_NEAR(active / 12.9e9, 1.0, 0.01);
}

TEST(MoePresets, LayerKindsFollowEveryAndFirstDense)
{
  const cs::ModelParams& ds = cs::model_presets().at("deepseek-moe-16b");
  EXPECT_FALSE(cs::is_moe_layer(ds.moe, 0));
  EXPECT_TRUE(cs::is_moe_layer(ds.moe, 1));
  EXPECT_EQ(cs::moe_layer_count(ds.moe, ds.layers), 27);
  const cs::ModelParams& sw = cs::model_presets().at("switch-base-128");
  EXPECT_EQ(cs::moe_layer_count(sw.moe, sw.layers), 12);
  EXPECT_TRUE(cs::is_moe_layer(sw.moe, 0));
  EXPECT_FALSE(cs::is_moe_layer(sw.moe, 1));
}

TEST(MoeRouting, EveryModelRoutesEachTokenTopKTimesAndRepeatsItself)
{
  for (const char* name : {"uniform", "balanced", "zipf", "locality"}) {
    auto model = cs::Registry<cs::RoutingModel>::instance().create(name);
    const auto q = request(16, 2);
    const cs::Routing a = model->route(q), b = model->route(q);
    ASSERT_EQ(a.tokens.size(), 32u) << name;
    for (std::size_t s = 0; s < a.tokens.size(); ++s) {
      EXPECT_NEAR(row_sum(a.tokens[s]), 4096, 1e-9) << name;
      EXPECT_EQ(a.tokens[s], b.tokens[s]) << name;
    }
  }
}

TEST(MoeRouting, RankTotalsPutEachRanksRoutingInItsFirstRowWithTheSameDistribution)
{
  // With rank_totals, uniform and zipf draw one multinomial per rank (the sum of its samples' multinomials) into the
  // rank's first row. Over many steps each expert's mean share per rank is what per-sample draws give, and so is the
  // spread (a multinomial's variance n p (1 - p) adds over independent samples).
  for (const char* name : {"uniform", "zipf"}) {
    auto model = cs::Registry<cs::RoutingModel>::instance().create(name);
    auto q = request(16, 2);
    q.rank_totals = true;
    const cs::Routing once = model->route(q);
    ASSERT_EQ(once.tokens.size(), 32u) << name;
    for (std::size_t s = 0; s < once.tokens.size(); ++s)
      EXPECT_NEAR(row_sum(once.tokens[s]), s % 4 == 0 ? 4 * 4096 : 0, 1e-9) << name;
    // Expert 0 of rank 0 over 400 microbatches, per-rank draws against per-sample draws.
    std::vector<double> totals, samples;
    for (int mb = 0; mb < 400; ++mb) {
      q.microbatch = mb;
      q.rank_totals = true;
      totals.push_back(model->route(q).tokens[0][0]);
      q.rank_totals = false;
      const cs::Routing r = model->route(q);
      samples.push_back(r.tokens[0][0] + r.tokens[1][0] + r.tokens[2][0] + r.tokens[3][0]);
    }
    EXPECT_NEAR(mean_of(totals) / mean_of(samples), 1.0, 0.02) << name;
    EXPECT_NEAR(sd_of(totals) / sd_of(samples), 1.0, 0.2) << name;
  }
  // The policies that read samples ask for them.
  auto& policies = cs::Registry<cs::MoePolicy>::instance();
  EXPECT_TRUE(policies.create("netmoe")->reads_samples());
  EXPECT_FALSE(policies.create("static-ep")->reads_samples());
  EXPECT_FALSE(policies.create("fastermoe")->reads_samples()); // its topology gate is off by default
}

TEST(MoeRouting, BlockSumsKeepWhatEachRankSendsEachBlockAndEachExpertsTotal)
{
  // With rank_blocks (static-ep, dropless), uniform and zipf draw what each rank sends each block of experts, then
  // each block's total over its experts. The rows keep both sums exactly; over many steps the two match the per-rank
  // draw's in mean and spread: rank 0's tokens to block 1 (experts 2-3), and expert 2's total.
  for (const char* name : {"uniform", "zipf"}) {
    auto model = cs::Registry<cs::RoutingModel>::instance().create(name);
    auto q = request(16, 2);
    q.rank_totals = true;
    q.rank_blocks = 2; // 16 experts over 8 ranks
    const cs::Routing once = model->route(q);
    ASSERT_EQ(once.tokens.size(), 32u) << name;
    for (std::size_t s = 0; s < once.tokens.size(); ++s) {
      EXPECT_NEAR(row_sum(once.tokens[s]), s % 4 == 0 ? 4 * 4096 : 0, 1e-6) << name;
      for (int b = 0; b < 8 && s % 4 == 0; ++b) { // whole tokens to each block
        const double block = once.tokens[s][2 * b] + once.tokens[s][2 * b + 1];
        EXPECT_NEAR(block, std::round(block), 1e-6) << name;
      }
    }
    for (int e = 0; e < 16; ++e) { // and to each expert in all
      double total = 0;
      for (const auto& row : once.tokens)
        total += row[e];
      EXPECT_NEAR(total, std::round(total), 1e-6) << name << " " << e;
    }
    std::vector<double> block_b, block_a, expert_b, expert_a;
    for (int mb = 0; mb < 400; ++mb) {
      q.microbatch = mb;
      for (int blocks : {2, 0}) {
        q.rank_blocks = blocks;
        const cs::Routing r = model->route(q);
        double expert = 0;
        for (const auto& row : r.tokens)
          expert += row[2];
        (blocks ? block_b : block_a).push_back(r.tokens[0][2] + r.tokens[0][3]);
        (blocks ? expert_b : expert_a).push_back(expert);
      }
    }
    EXPECT_NEAR(mean_of(block_b) / mean_of(block_a), 1.0, 0.02) << name;
    EXPECT_NEAR(sd_of(block_b) / sd_of(block_a), 1.0, 0.2) << name;
    EXPECT_NEAR(mean_of(expert_b) / mean_of(expert_a), 1.0, 0.02) << name;
    EXPECT_NEAR(sd_of(expert_b) / sd_of(expert_a), 1.0, 0.2) << name;
  }
  // static-ep asks for block sums when dropless and the experts divide into the ranks; other policies read more.
  auto& policies = cs::Registry<cs::MoePolicy>::instance();
  EXPECT_EQ(policies.create("static-ep")->block_sums_only(256, 64, 0), 4);
  EXPECT_EQ(policies.create("static-ep")->block_sums_only(256, 64, 1.25), 0);
  EXPECT_EQ(policies.create("static-ep")->block_sums_only(10, 4, 0), 0);
  EXPECT_EQ(policies.create("flexmoe")->block_sums_only(256, 64, 0), 0);
}

TEST(MoeRouting, ZipfSkewsAndDriftsGradually)
{
  auto zipf = cs::Registry<cs::RoutingModel>::instance().create("zipf"); // skew 1, drift 0.1
  std::vector<double> load(16, 0.0);
  const cs::Routing r = zipf->route(request(16, 2));
  for (const auto& row : r.tokens)
    for (int e = 0; e < 16; ++e)
      load[e] += row[e];
  const double top = *std::max_element(load.begin(), load.end()), mean = row_sum(load) / 16;
  // Zipf(1) over 16 ranks: the hottest takes 1 / H_16 = 29.6% of the tokens, 4.7x the mean.
  EXPECT_NEAR(top / mean, 16 / 3.3807, 0.15);
  // One iteration later the popularity order moved by neighbour swaps only: the hottest expert is still among the
  // two hottest.
  std::vector<double> next(16, 0.0);
  for (const auto& row : zipf->route(request(16, 2, 1)).tokens)
    for (int e = 0; e < 16; ++e)
      next[e] += row[e];
  const int hot = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
  int above = 0;
  for (int e = 0; e < 16; ++e)
    above += next[e] > next[hot] ? 1 : 0;
  EXPECT_LE(above, 1);
}

TEST(MoeRouting, LocalitySendsMostOfASamplesTokensToAFewExperts)
{
  auto model = cs::Registry<cs::RoutingModel>::instance().create("locality"); // 2 x top_k preferred, strength 0.8
  for (const auto& row : model->route(request(32, 2)).tokens) {
    std::vector<double> sorted = row;
    std::sort(sorted.rbegin(), sorted.rend());
    EXPECT_GT(std::accumulate(sorted.begin(), sorted.begin() + 4, 0.0) / row_sum(row), 0.75);
  }
}

TEST(MoeRouting, ThroughAPlacementCapacityDropsAndPaddingFills)
{
  cs::Routing r;
  r.tokens.assign(8, std::vector<double>(4, 0.0)); // 2 ranks x 4 samples, 4 experts
  for (auto& row : r.tokens)
    row = {3000, 1000, 96, 0}; // 4096 = 2048 tokens x top-2
  cs::MoeContext c = context(2, 4);
  const auto placement = cs::contiguous_placement(4, 2); // experts 0, 1 on rank 0; 2, 3 on rank 1
  const cs::MoeStep dropless = cs::route_through(c, r, placement);
  EXPECT_DOUBLE_EQ(dropless.dropped, 0);
  EXPECT_DOUBLE_EQ(dropless.tokens[0][0], 8 * 3000.0);
  EXPECT_DOUBLE_EQ(dropless.dispatch[0 * 2 + 1], 4 * 96.0 * 8192); // rank 0 sends expert 2's tokens to rank 1
  EXPECT_DOUBLE_EQ(dropless.dispatch[1 * 2 + 0], 4 * 4000.0 * 8192);
  // Capacity 1.0: each rank may send each expert its even share, 4 x 4096 / 4 = 4096 tokens.
  c.capacity_factor = 1.0;
  const cs::MoeStep capped = cs::route_through(c, r, placement);
  EXPECT_DOUBLE_EQ(capped.dropped, 2 * (12000.0 - 4096.0));
  EXPECT_DOUBLE_EQ(capped.tokens[0][0], 2 * 4096.0);
  const cs::MoeStep padded = cs::route_through(c, r, placement, {}, true);
  EXPECT_DOUBLE_EQ(padded.tokens[1][3], 2 * 4096.0); // empty expert 3 computes a full buffer
}

TEST(MoeAllToAllV, ClosedFormIsTheSlowestPortOrNic)
{
  cs::GroupShape g;
  g.ranks = 4;
  g.nodes = 2;
  g.per_node = 2;
  g.intra_bw = 100e9;
  g.nic_bw = 10e9;
  g.nics = 2;
  const cs::ProtocolParams p{"test", 0.0, 0.0, 1.0, 0.0, false};
  std::vector<double> m(16, 0.0);
  m[0 * 4 + 1] = 1e9; // inside machine 0: 10 ms at 100 GB/s
  m[0 * 4 + 2] = 4e9; // machine 0 -> 1 from rank 0: its NIC share (10 GB/s) takes 400 ms
  m[1 * 4 + 3] = 1e9;
  EXPECT_NEAR(cs::all_to_all_v_seconds(m, g, p, {0, 0, 1, 1}), 0.4, 1e-12);
  m[0 * 4 + 2] = 0;
  EXPECT_NEAR(cs::all_to_all_v_seconds(m, g, p, {0, 0, 1, 1}), 0.1, 1e-12); // 1 GB through a 10 GB/s share
}

TEST(MoePolicies, FasterMoeShadowsTheHotExpertAndFlexMoeReplicatesIt)
{
  cs::Routing r;
  r.tokens.assign(16, std::vector<double>(8, 0.0)); // 4 ranks x 4 samples, 8 experts; expert 0 takes 70%
  for (auto& row : r.tokens)
    row = {2867, 176, 176, 176, 176, 176, 175, 174};
  const cs::MoeContext c = context(4, 8);
  auto loads = [](const cs::MoeStep& s) {
    const auto l = cs::rank_loads(s);
    return *std::max_element(l.begin(), l.end()) / (std::accumulate(l.begin(), l.end(), 0.0) / l.size());
  };
  auto stat = cs::Registry<cs::MoePolicy>::instance().create("static-ep");
  auto faster = cs::Registry<cs::MoePolicy>::instance().create("fastermoe");
  auto flex = cs::Registry<cs::MoePolicy>::instance().create("flexmoe");
  const cs::MoeStep s0 = stat->plan(c, r), s1 = faster->plan(c, r), s2 = flex->plan(c, r);
  EXPECT_GT(loads(s0), 2.5);
  EXPECT_GT(s1.shadow_bytes, 0);
  EXPECT_LT(loads(s1), loads(s0));
  EXPECT_GT(s2.placement_changes, 0);
  EXPECT_DOUBLE_EQ(s2.moved_bytes, s2.placement_changes * c.expert_state_bytes);
  EXPECT_LT(loads(s2), loads(s0));
  for (const auto& m : s2.moves)
    EXPECT_NE(m.from, m.to);
}

TEST(MoePolicies, NetMoeKeepsTokensInsideMachines)
{
  cs::MoeContext c = context(16, 16); // two machines of 8
  auto locality = cs::Registry<cs::RoutingModel>::instance().create("locality");
  cs::RoutingRequest q = request(16, 2);
  q.ranks = 16;
  const cs::Routing r = locality->route(q);
  auto stat = cs::Registry<cs::MoePolicy>::instance().create("static-ep");
  auto net = cs::Registry<cs::MoePolicy>::instance().create("netmoe");
  auto inter = [&](const cs::MoeStep& s) {
    double bytes = 0;
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j)
        bytes += c.machine[i] != c.machine[j] ? s.dispatch[i * 16 + j] : 0.0;
    return bytes;
  };
  const cs::MoeStep a = stat->plan(c, r), b = net->plan(c, r);
  EXPECT_LT(inter(b), 0.8 * inter(a));
  EXPECT_DOUBLE_EQ(a.routed, b.routed); // every token still goes to its experts
}

TEST(MoePolicies, LshCompressesTheWireAndMPipeMoePipelines)
{
  cs::Routing r;
  r.tokens.assign(16, std::vector<double>(8, 512.0));
  const cs::MoeContext c = context(4, 8);
  auto lsh = cs::Registry<cs::MoePolicy>::instance().create("lsh-moe");
  const cs::MoeStep l = lsh->plan(c, r);
  EXPECT_DOUBLE_EQ(l.wire_scale, 0.2);
  EXPECT_GT(l.extra_forward_s[0], 0);
  auto mpipe = cs::Registry<cs::MoePolicy>::instance().create("mpipemoe");
  const cs::MoeStep m = mpipe->plan(c, r);
  EXPECT_GT(m.partitions, 1);
  EXPECT_LT(m.activation_scale, 1.0);
}

TEST(MoePolicies, FasterMoeTopologyGateCapsWhatLeavesAMachine)
{
  cs::MoeContext c = context(16, 16); // two machines of 8, one expert per GPU
  cs::Routing r;
  r.tokens.assign(64, std::vector<double>(16, 256.0)); // half of every sample's tokens go off its machine
  cs::ObjectReader params(YAML::Load("{topology_gate: 0.25, shadowing: false}"), nullptr, "policies.moe");
  auto faster = cs::Registry<cs::MoePolicy>::instance().create("fastermoe");
  faster->configure(params);
  const cs::MoeStep s = faster->plan(c, r);
  double inter = 0;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      inter += c.machine[i] != c.machine[j] ? s.dispatch[i * 16 + j] : 0.0;
  EXPECT_NEAR(inter / (s.routed * c.token_bytes), 0.25, 1e-9);
  EXPECT_DOUBLE_EQ(s.routed, 64 * 4096.0); // no token is lost, only moved home
}
