#include "platform/topology.hpp"
#include "base/splitmix.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <deque>
#include <limits>
#include <stdexcept>

namespace cs {

// Boost.Graph view: an undirected graph whose edges carry the index of our Edge.
struct Topology::Graph {
  using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                  boost::property<boost::edge_index_t, int>>;
  G g;
  // The same adjacency flattened (offsets, then (neighbour, edge) in Boost's out-edge order): route searches run
  // once per source and walk it a few thousand times each.
  std::vector<int> offset;
  std::vector<std::pair<int, int>> next;
  std::vector<char> host; // per vertex
  // Per host vertex: the edge to its one switch neighbour (-1: none, or several). Per vertex: its index among the
  // switches (-1 for hosts). Routes between two such hosts run through the switches alone, searched once per source
  // switch over the switches only (a host-rooted search per GPU was 420 KB a GPU on a 98,304-GPU fabric).
  std::vector<int> uplink;
  std::vector<int> switch_index;
  int switches = 0;
};

Topology::Topology() = default;
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

int Topology::add_host(const std::string& name, int machine, int local)
{
  vertices_.push_back(TopologyVertex{name, true, machine, local, {}});
  int id = static_cast<int>(vertices_.size()) - 1;
  host_index_of_vertex_.resize(vertices_.size(), -1);
  host_index_of_vertex_[id] = static_cast<int>(hosts_.size());
  hosts_.push_back(id);
  graph_.reset();
  search_tree_.clear();
  switch_tree_.clear();
  route_rows_.clear();
  route_store_.clear();
  return id;
}

int Topology::add_switch(const std::string& name)
{
  vertices_.push_back(TopologyVertex{name, false, -1, -1, {}});
  host_index_of_vertex_.resize(vertices_.size(), -1);
  graph_.reset();
  search_tree_.clear();
  switch_tree_.clear();
  route_rows_.clear();
  route_store_.clear();
  return static_cast<int>(vertices_.size()) - 1;
}

int Topology::add_link(const std::string& name, double bandwidth, double latency, const std::string& tier,
                       bool full_duplex)
{
  if (!(bandwidth > 0) || latency < 0)
    throw std::invalid_argument("link " + name + " needs a positive bandwidth and a non-negative latency");
  links_.push_back(PhysicalLink{name, bandwidth, latency, tier, full_duplex});
  return static_cast<int>(links_.size()) - 1;
}

int Topology::add_link_bundle(const std::string& name, double bandwidth, int ports, double latency,
                              const std::string& tier, int stage)
{
  if (ports < 1)
    throw std::invalid_argument("link bundle " + name + " needs at least one port");
  const int first = static_cast<int>(links_.size());
  for (int k = 0; k < ports; ++k)
    add_link(name + std::to_string(k), bandwidth / ports, latency, tier);
  bundle_of_link_.resize(links_.size(), -1);
  for (int k = 0; k < ports; ++k)
    bundle_of_link_[first + k] = static_cast<int>(bundles_.size());
  bundles_.push_back(Bundle{first, ports, stage});
  route_rows_.clear();
  route_store_.clear();
  return first;
}

void Topology::set_ecmp_seed(std::uint64_t seed)
{
  ecmp_seed_ = seed;
  route_rows_.clear();
  route_store_.clear();
}

namespace {} // namespace

// Edges join a bundle's first port; each crossing moves to the port this pair hashes to at that stage. Both leaves
// of a path through the spine use the same stage hash, so the flow leaves and enters through the same spine plane.
void Topology::pick_ports(std::vector<LinkUse>& path, int src_host, int dst_host) const
{
  for (auto& use : path) {
    if (use.link >= static_cast<int>(bundle_of_link_.size()) || bundle_of_link_[use.link] < 0)
      continue;
    const Bundle& b = bundles_[bundle_of_link_[use.link]];
    const std::uint64_t h =
        splitmix64(splitmix64(splitmix64(ecmp_seed_ ^ std::uint64_t(b.stage)) ^ std::uint64_t(src_host)) ^
                   std::uint64_t(dst_host));
    use.link = b.first + static_cast<int>(h % std::uint64_t(b.ports));
  }
}

void Topology::add_edge(int a, int b, std::vector<LinkUse> links)
{
  edges_.push_back(Edge{a, b, std::move(links)});
  graph_.reset();
  search_tree_.clear();
  switch_tree_.clear();
  route_rows_.clear();
  route_store_.clear();
}

// The links of edge e walked away from vertex `from`, in order and direction.
void Topology::append_links(std::vector<LinkUse>& path, const Edge& e, int from)
{
  if (e.a == from)
    path.insert(path.end(), e.links.begin(), e.links.end());
  else
    for (auto it = e.links.rbegin(); it != e.links.rend(); ++it)
      path.push_back(LinkUse{it->link, !it->up});
}

// One breadth-first search per root serves every destination. It never expands a host other than the root
// (hosts are not routers); out-edges are visited in insertion order, so paths are deterministic.
const std::vector<int>& Topology::search_tree(int root) const
{
  auto tree = search_tree_.find(root);
  if (tree != search_tree_.end())
    return tree->second;
  const auto& offset = graph_->offset;
  const auto& next = graph_->next;
  std::vector<int> reached_by(vertices_.size(), -1);
  std::vector<char> seen(vertices_.size(), 0);
  const auto& host = graph_->host;
  std::vector<int> queue{root}; // hosts other than the root are reached but never queued: they do not route
  queue.reserve(vertices_.size());
  seen[root] = 1;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int v = queue[head];
    for (int k = offset[v]; k < offset[v + 1]; ++k) {
      const auto [w, edge] = next[k];
      if (seen[w])
        continue;
      seen[w] = 1;
      reached_by[w] = edge;
      if (!host[w])
        queue.push_back(w);
    }
  }
  return search_tree_.emplace(root, std::move(reached_by)).first->second;
}

const std::vector<LinkUse>& Topology::route(int src_host, int dst_host) const
{
  if (route_rows_.empty())
    route_rows_.resize(hosts_.size());
  auto& row = route_rows_.at(src_host);
  auto slot = std::lower_bound(row.begin(), row.end(), std::make_pair(dst_host, -1));
  if (slot != row.end() && slot->first == dst_host)
    return route_store_[slot->second];
  ensure_graph();
  const int src = hosts_.at(src_host);
  const int dst = hosts_.at(dst_host);
  std::vector<LinkUse> path;
  if (src != dst && switch_route(src, dst, path)) {
    if (!bundles_.empty())
      pick_ports(path, src_host, dst_host);
  } else if (src != dst) {
    // A host with one edge, to a switch, routes through that switch: its search tree is the switch's, which all
    // the hosts under one leaf share (1,024 searches became 128 on a 1,024-GPU fat-tree). The switch's search
    // reaches every other vertex exactly as the host's would, since the host's only edge leads there first.
    int root = src;
    const auto& g = graph_->g;
    if (boost::out_degree(src, g) == 1) {
      auto edge = *boost::out_edges(src, g).first;
      const int other = static_cast<int>(boost::target(edge, g));
      if (!vertices_[other].is_host) {
        append_links(path, edges_[boost::get(boost::edge_index, g)[edge]], src);
        root = other;
      }
    }
    const std::vector<int>& via_edge = search_tree(root);
    if (via_edge[dst] < 0)
      throw std::logic_error("no route from " + vertices_[src].name + " to " + vertices_[dst].name);
    std::vector<int> vertex_path{dst};
    for (int v = dst; v != root;) {
      const Edge& e = edges_[via_edge[v]];
      v = (e.a == v) ? e.b : e.a;
      vertex_path.push_back(v);
    }
    for (std::size_t i = vertex_path.size() - 1; i > 0; --i)
      append_links(path, edges_[via_edge[vertex_path[i - 1]]], vertex_path[i]);
    if (!bundles_.empty())
      pick_ports(path, src_host, dst_host);
  }
  route_store_.push_back(std::move(path));
  row.insert(slot, {dst_host, static_cast<int>(route_store_.size()) - 1});
  return route_store_.back();
}

double Topology::route_latency(int src_host, int dst_host) const
{
  double sum = 0;
  for (const auto& use : route(src_host, dst_host))
    sum += links_[use.link].latency;
  return sum;
}

double Topology::route_bandwidth(int src_host, int dst_host) const
{
  double bw = std::numeric_limits<double>::infinity();
  for (const auto& use : route(src_host, dst_host))
    bw = std::min(bw, links_[use.link].bandwidth);
  return bw;
}

void Topology::ensure_graph() const
{
  if (graph_)
    return;
  graph_ = std::make_unique<Graph>();
  graph_->g = Graph::G(vertices_.size());
  for (std::size_t e = 0; e < edges_.size(); ++e)
    boost::add_edge(edges_[e].a, edges_[e].b, static_cast<int>(e), graph_->g);
  const auto& g = graph_->g;
  auto edge_index = boost::get(boost::edge_index, g);
  graph_->offset.assign(1, 0);
  for (const auto& v : vertices_)
    graph_->host.push_back(v.is_host ? 1 : 0);
  for (std::size_t v = 0; v < vertices_.size(); ++v) {
    for (auto [it, end] = boost::out_edges(v, g); it != end; ++it)
      graph_->next.emplace_back(static_cast<int>(boost::target(*it, g)), edge_index[*it]);
    graph_->offset.push_back(static_cast<int>(graph_->next.size()));
  }
  auto& gr = *graph_;
  gr.uplink.assign(vertices_.size(), -1);
  gr.switch_index.assign(vertices_.size(), -1);
  for (std::size_t v = 0; v < vertices_.size(); ++v) {
    if (!vertices_[v].is_host) {
      gr.switch_index[v] = gr.switches++;
      continue;
    }
    int found = 0;
    for (int k = gr.offset[v]; k < gr.offset[v + 1]; ++k)
      if (!gr.host[gr.next[k].first] && found++ == 0)
        gr.uplink[v] = gr.next[k].second;
    if (found != 1)
      gr.uplink[v] = -1;
  }
}

const std::vector<int>& Topology::switch_tree(int root) const
{
  auto tree = switch_tree_.find(root);
  if (tree != switch_tree_.end())
    return tree->second;
  const auto& gr = *graph_;
  std::vector<int> reached_by(gr.switches, -1);
  std::vector<char> seen(gr.switches, 0);
  std::vector<int> queue{root};
  seen[gr.switch_index[root]] = 1;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int v = queue[head];
    for (int k = gr.offset[v]; k < gr.offset[v + 1]; ++k) {
      const auto [w, edge] = gr.next[k];
      const int i = gr.switch_index[w];
      if (i < 0 || seen[i])
        continue;
      seen[i] = 1;
      reached_by[i] = edge;
      queue.push_back(w);
    }
  }
  return switch_tree_.emplace(root, std::move(reached_by)).first->second;
}

// The route between two hosts that share an edge: that edge. Between two that each hang off one switch: up to the
// source's switch, across the switches, down from the destination's. A host-rooted search takes the same path (hosts
// are never transit, so it continues from the source's switch alone, and reaches the destination only from its switch),
// ties included: the switch-only search visits the switches in the same order. False when the shortcut does not apply.
bool Topology::switch_route(int src, int dst, std::vector<LinkUse>& path) const
{
  const auto& gr = *graph_;
  for (int k = gr.offset[src]; k < gr.offset[src + 1]; ++k)
    if (gr.next[k].first == dst) { // a direct edge: the search reaches a neighbour first by the first edge to it
      append_links(path, edges_[gr.next[k].second], src);
      return true;
    }
  const int up = gr.uplink[src], down = gr.uplink[dst];
  if (up < 0 || down < 0)
    return false;
  const int from = edges_[up].a == src ? edges_[up].b : edges_[up].a;
  const int to = edges_[down].a == dst ? edges_[down].b : edges_[down].a;
  append_links(path, edges_[up], src);
  std::vector<int> switch_path{to};
  if (from != to) {
    const std::vector<int>& via_edge = switch_tree(from);
    for (int v = to; v != from;) {
      const int e = via_edge[gr.switch_index[v]];
      if (e < 0)
        throw std::logic_error("no route from " + vertices_[src].name + " to " + vertices_[dst].name);
      v = edges_[e].a == v ? edges_[e].b : edges_[e].a;
      switch_path.push_back(v);
    }
    for (std::size_t i = switch_path.size() - 1; i > 0; --i)
      append_links(path, edges_[via_edge[gr.switch_index[switch_path[i - 1]]]], switch_path[i]);
  }
  append_links(path, edges_[down], to);
  return true;
}

int Topology::find_vertex(const std::string& name) const
{
  for (std::size_t v = 0; v < vertices_.size(); ++v)
    if (vertices_[v].name == name)
      return static_cast<int>(v);
  return -1;
}

std::vector<int> Topology::hop_distances(int from) const
{
  ensure_graph();
  const auto& g = graph_->g;
  std::vector<int> dist(vertices_.size(), -1);
  std::deque<int> queue{from};
  dist[from] = 0;
  while (!queue.empty()) {
    int v = queue.front();
    queue.pop_front();
    if (v != from && vertices_[v].is_host)
      continue; // hosts are not routers
    for (auto [it, end] = boost::out_edges(v, g); it != end; ++it) {
      int w = static_cast<int>(boost::target(*it, g));
      if (dist[w] < 0) {
        dist[w] = dist[v] + 1;
        queue.push_back(w);
      }
    }
  }
  return dist;
}

int Topology::hop_level(int src_host, int dst_host) const
{
  const auto& a = vertices_[hosts_.at(src_host)].groups;
  const auto& b = vertices_[hosts_.at(dst_host)].groups;
  for (std::size_t level = 0; level < a.size() && level < b.size(); ++level)
    if (a[level] == b[level])
      return static_cast<int>(level);
  return 3;
}

} // namespace cs
