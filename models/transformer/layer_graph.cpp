#include "models/transformer/layer_graph.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace cs {

std::vector<std::vector<int>> layer_consumers(const std::vector<GraphLayerParams>& graph)
{
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < graph.size(); ++i)
    index[graph[i].name] = static_cast<int>(i);
  std::vector<std::vector<int>> out(graph.size());
  for (std::size_t i = 0; i < graph.size(); ++i)
    for (const auto& input : graph[i].inputs) {
      auto it = index.find(input);
      if (it == index.end() || it->second >= static_cast<int>(i))
        throw std::invalid_argument("layer '" + graph[i].name + "' reads '" + input + "', which is not above it");
      out[it->second].push_back(static_cast<int>(i));
    }
  return out;
}

std::vector<double> layer_forward_seconds(const std::vector<GraphLayerParams>& graph, const KernelCostModel& cost,
                                          int micro, const std::string& dtype)
{
  std::vector<double> out;
  for (const auto& l : graph)
    out.push_back(l.kernel
                      ? cost.predict(scale_kernel(*l.kernel, micro)).total
                      : cost.predict(BandwidthKernel{"layer", l.bytes.value * micro, 0, l.flops * micro, dtype}).total);
  return out;
}

std::vector<int> contiguous_partition(const std::vector<double>& seconds, int stages)
{
  const int n = static_cast<int>(seconds.size());
  if (stages < 1 || stages > n)
    throw std::invalid_argument("cannot cut " + std::to_string(n) + " layers into " + std::to_string(stages) +
                                " stages");
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + seconds[i];
  // best[k][i]: the slowest stage when the first i layers form k stages; cut[k][i]: where the last one starts.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> cut(stages + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= stages; ++k)
    for (int i = k; i <= n; ++i)
      for (int j = k - 1; j < i; ++j) {
        const double slowest = std::max(best[k - 1][j], prefix[i] - prefix[j]);
        if (slowest < best[k][i] - 1e-15) {
          best[k][i] = slowest;
          cut[k][i] = j;
        }
      }
  std::vector<int> starts(stages + 1, n);
  for (int k = stages, i = n; k >= 1; --k) {
    starts[k - 1] = cut[k][i];
    i = cut[k][i];
  }
  return starts;
}

namespace {

// Stage edges from layer edges: one edge per (producer stage, consumer stage), carrying each producing layer's
// activations once.
void connect(const std::vector<GraphLayerParams>& graph, const std::vector<std::vector<int>>& consumers,
             LayerStages& out, int stages)
{
  std::vector<std::map<int, double>> edges(stages);
  for (std::size_t u = 0; u < graph.size(); ++u) {
    std::set<int> fed;
    for (int v : consumers[u])
      if (out.stage_of[v] != out.stage_of[u])
        fed.insert(out.stage_of[v]);
    for (int s : fed)
      edges[out.stage_of[u]][s] += graph[u].activations.value;
  }
  out.successors.assign(stages, {});
  out.edge_bytes.assign(stages, {});
  for (int s = 0; s < stages; ++s)
    for (const auto& [t, bytes] : edges[s]) {
      if (t <= s)
        throw std::logic_error("stage edge against the stage order");
      out.successors[s].push_back(t);
      out.edge_bytes[s].push_back(bytes);
    }
}

} // namespace

LayerStages chain_stages(const std::vector<GraphLayerParams>& graph, const std::vector<double>& seconds, int stages)
{
  const auto consumers = layer_consumers(graph);
  const auto starts = contiguous_partition(seconds, stages);
  LayerStages out;
  out.stage_of.resize(graph.size());
  for (int s = 0; s < stages; ++s)
    for (int i = starts[s]; i < starts[s + 1]; ++i)
      out.stage_of[i] = s;
  out.successors.assign(stages, {});
  out.edge_bytes.assign(stages, {});
  for (int s = 0; s + 1 < stages; ++s) {
    double bytes = 0; // every output produced at or before s that some layer after s still reads
    for (int u = 0; u < starts[s + 1]; ++u)
      if (std::any_of(consumers[u].begin(), consumers[u].end(), [&](int v) { return v >= starts[s + 1]; }))
        bytes += graph[u].activations.value;
    out.successors[s] = {s + 1};
    out.edge_bytes[s] = {bytes};
  }
  return out;
}

std::vector<int> layer_branches(const std::vector<GraphLayerParams>& graph)
{
  const auto consumers = layer_consumers(graph);
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < graph.size(); ++i)
    index[graph[i].name] = static_cast<int>(i);
  std::vector<int> branch_of(graph.size(), -1);
  int branches = 0;
  for (std::size_t i = 0; i < graph.size(); ++i) {
    if (graph[i].inputs.size() == 1) {
      const int input = index.at(graph[i].inputs[0]);
      if (consumers[input].size() == 1) {
        branch_of[i] = branch_of[input];
        continue;
      }
    }
    branch_of[i] = branches++;
  }
  return branch_of;
}

LayerStages graph_stages(const std::vector<GraphLayerParams>& graph, const std::vector<double>& seconds, int stages)
{
  const auto consumers = layer_consumers(graph);
  const int n = static_cast<int>(graph.size());
  const auto branch_of = layer_branches(graph);
  std::vector<std::vector<int>> branches;
  for (int i = 0; i < n; ++i) {
    if (branch_of[i] == static_cast<int>(branches.size()))
      branches.emplace_back();
    branches[branch_of[i]].push_back(i);
  }
  const int b = static_cast<int>(branches.size());
  if (stages < b)
    throw std::invalid_argument("the layer graph has " + std::to_string(b) +
                                " branches; the graph pipeline needs at "
                                "least that many stages");
  std::vector<double> total(b, 0.0);
  for (int k = 0; k < b; ++k)
    for (int i : branches[k])
      total[k] += seconds[i];
  std::vector<int> given(b, 1);
  for (int spare = stages - b; spare > 0; --spare) {
    int pick = -1;
    for (int k = 0; k < b; ++k)
      if (given[k] < static_cast<int>(branches[k].size()) &&
          (pick < 0 || total[k] / given[k] > total[pick] / given[pick] + 1e-15))
        pick = k;
    if (pick < 0)
      throw std::invalid_argument("more stages than layers");
    ++given[pick];
  }
  // Cut each branch; stages are numbered by their first layer, which puts every stage edge forward.
  std::vector<std::pair<int, std::vector<int>>> pieces; // (first layer, layers)
  for (int k = 0; k < b; ++k) {
    std::vector<double> s;
    for (int i : branches[k])
      s.push_back(seconds[i]);
    const auto starts = contiguous_partition(s, given[k]);
    for (int c = 0; c < given[k]; ++c)
      pieces.emplace_back(branches[k][starts[c]],
                          std::vector<int>(branches[k].begin() + starts[c], branches[k].begin() + starts[c + 1]));
  }
  std::sort(pieces.begin(), pieces.end());
  LayerStages out;
  out.branches = b;
  out.stage_of.assign(n, -1);
  for (int s = 0; s < stages; ++s)
    for (int i : pieces[s].second)
      out.stage_of[i] = s;
  connect(graph, consumers, out, stages);
  return out;
}

} // namespace cs
