// `netmoe` (Liu et al., ICLR'25): expert placement stays fixed; each step the samples are placed instead, so that
// the tokens of a sample, which prefer a few experts, travel to them inside a node rather than across nodes. The
// paper solves an assignment with Kuhn-Munkres; here samples are assigned to machines by a min-cost flow (Boost.Graph's
// successive shortest paths: sample -> machine edges priced by the sample's tokens whose experts live on other
// machines, each machine taking as many samples as its GPUs hold), then spread over the machine's GPUs in turn
// [recon: moving a sample rides on the previous layer's combine, so the move itself is not priced].
#include "models/moe/moe_policy.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/successive_shortest_path_nonnegative_weights.hpp>

#include <cmath>
#include <map>

namespace cs {
namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, long,
                    boost::property<boost::edge_residual_capacity_t, long,
                                    boost::property<boost::edge_reverse_t, Traits::edge_descriptor,
                                                    boost::property<boost::edge_weight_t, long>>>>>;

class NetMoe : public MoePolicy {
public:
  void configure(ObjectReader& r) override { read_capacity_pad(r, pad_); }
  bool reads_samples() const override { return true; } // it places samples
  MoeStep plan(const MoeContext& c, const Routing& routing) override
  {
    const ExpertPlacement placement = contiguous_placement(c.experts, c.ranks);
    std::map<int, std::vector<int>> ranks_of; // machine -> its ranks, in order
    for (int r = 0; r < c.ranks; ++r)
      ranks_of[c.machine[r]].push_back(r);
    if (ranks_of.size() < 2)
      return route_through(c, routing, placement, {}, pad_);
    std::vector<int> machines;
    for (const auto& [m, ranks] : ranks_of)
      machines.push_back(m);
    const int S = static_cast<int>(routing.tokens.size()), K = static_cast<int>(machines.size());
    FlowGraph g(S + K + 2);
    const int source = S + K, sink = S + K + 1;
    auto capacity = boost::get(boost::edge_capacity, g);
    auto reverse = boost::get(boost::edge_reverse, g);
    auto weight = boost::get(boost::edge_weight, g);
    auto add = [&](int a, int b, long cap, long w) {
      auto e = boost::add_edge(a, b, g).first;
      auto back = boost::add_edge(b, a, g).first;
      capacity[e] = cap;
      capacity[back] = 0;
      weight[e] = w;
      weight[back] = -w;
      reverse[e] = back;
      reverse[back] = e;
    };
    for (int s = 0; s < S; ++s) {
      add(source, s, 1, 0);
      for (int k = 0; k < K; ++k) {
        double away = 0; // tokens of sample s whose expert lives off machine k
        for (int e = 0; e < c.experts; ++e)
          if (c.machine[placement[e][0]] != machines[k])
            away += routing.tokens[s][e];
        add(s, S + k, 1, std::lround(away));
      }
    }
    for (int k = 0; k < K; ++k)
      add(S + k, sink, static_cast<long>(ranks_of[machines[k]].size()) * c.samples_per_rank, 0);
    boost::successive_shortest_path_nonnegative_weights(g, source, sink);
    auto residual = boost::get(boost::edge_residual_capacity, g);
    std::vector<int> sample_rank(S, 0);
    std::vector<int> filled(K, 0);
    for (int s = 0; s < S; ++s) {
      boost::graph_traits<FlowGraph>::out_edge_iterator it, end;
      for (boost::tie(it, end) = boost::out_edges(s, g); it != end; ++it) {
        const int k = static_cast<int>(boost::target(*it, g)) - S;
        if (k < 0 || k >= K || capacity[*it] == 0 || residual[*it] != 0)
          continue;
        const auto& ranks = ranks_of[machines[k]];
        sample_rank[s] = ranks[(filled[k]++ / c.samples_per_rank) % ranks.size()];
      }
    }
    return route_through(c, routing, placement, sample_rank, pad_);
  }

private:
  bool pad_ = false;
};

} // namespace

CS_REGISTER_POLICY(MoePolicy, NetMoe, "moe", "netmoe",
                   "NetMoE: place samples each step to keep tokens inside nodes (min-cost assignment) [recon]");

} // namespace cs
