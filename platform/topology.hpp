// The cluster's topology as plain data: hosts, switches, full-duplex links, routes and hop levels (no SimGrid).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cs {

/** A full-duplex physical link. Each direction has the full bandwidth (SimGrid split-duplex). */
struct PhysicalLink {
  std::string name;
  double bandwidth = 0; // bytes/s per direction
  double latency = 0;   // seconds
  std::string tier;     // what it is: nvlink, pcie, nic, leaf-uplink, spine-uplink, host-link, tor-uplink, agg-uplink
  bool full_duplex = true; // false: both directions share one capacity (SimGrid SHARED link, as LV08 was fit on)
};

/** One link crossed in one direction: up = from the edge's first vertex towards its second. */
struct LinkUse {
  int link = -1;
  bool up = true;
  bool operator==(const LinkUse& o) const { return link == o.link && up == o.up; }
};

struct TopologyVertex {
  std::string name;
  bool is_host = false;
  int machine = -1; // GPU node or CPU host index (hosts only)
  int local = -1;   // GPU index inside its node (GPU hosts only)
  // Group ids per hop level: [0] machine, [1] leaf/rack switch, [2] pod/aggregation, [3] the whole fabric.
  std::vector<int> groups;
};

/** Vertices (hosts and switches) joined by edges; each edge crosses an ordered list of physical links.
 *  Routes are minimal-hop paths in which hosts are never transit, found deterministically (lowest vertex
 *  index first), so the SimGrid platform and every policy see the same path; where an edge is an ECMP bundle,
 *  the pair's seeded hash picks its port. */
class Topology {
public:
  Topology();
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  int add_host(const std::string& name, int machine, int local);
  int add_switch(const std::string& name);
  int add_link(const std::string& name, double bandwidth, double latency, const std::string& tier,
               bool full_duplex = true);
  /** Joins a and b; going a -> b crosses `links` in order and direction, b -> a in reverse order and direction. */
  void add_edge(int a, int b, std::vector<LinkUse> links);
  /** Joins a and b through one link whose up direction points from a to b. */
  void add_edge(int a, int b, int link) { add_edge(a, b, std::vector<LinkUse>{LinkUse{link, true}}); }
  /** ECMP: `ports` parallel links named name0, name1, ... sharing `bandwidth`; join them with add_edge(a, b, first
   *  returned). Routes cross the one a hash of (source host, destination host, stage, ecmp seed) picks, so flows
   *  between different pairs may collide on a port. Bundles of one stage are the same switch level. */
  int add_link_bundle(const std::string& name, double bandwidth, int ports, double latency, const std::string& tier,
                      int stage);
  void set_ecmp_seed(std::uint64_t seed);

  /** The links crossed from host `src` to host `dst`, in order; empty when src == dst.
   *  Throws std::logic_error when no path exists. Cached per pair. */
  const std::vector<LinkUse>& route(int src_host, int dst_host) const;
  /** Sum of latencies and the smallest bandwidth along route(src, dst). */
  double route_latency(int src_host, int dst_host) const;
  double route_bandwidth(int src_host, int dst_host) const;
  /** Lowest level at which the two hosts share a group: 0 same machine, 1 same leaf/rack, 2 same pod, 3 fabric. */
  int hop_level(int src_host, int dst_host) const;

  /** The vertex named `name` (host or switch), or -1. */
  int find_vertex(const std::string& name) const;
  /** Edges on a shortest path from vertex `from` to every vertex (-1 unreachable); hosts are never transit. */
  std::vector<int> hop_distances(int from) const;

  const std::vector<TopologyVertex>& vertices() const { return vertices_; }
  const std::vector<PhysicalLink>& links() const { return links_; }
  /** Host vertex ids, in creation order (host index i -> vertices()[hosts()[i]]). */
  const std::vector<int>& hosts() const { return hosts_; }
  int host_count() const { return static_cast<int>(hosts_.size()); }
  TopologyVertex& vertex(int v) { return vertices_.at(v); }
  const TopologyVertex& vertex(int v) const { return vertices_.at(v); }

private:
  struct Edge {
    int a, b;
    std::vector<LinkUse> links; // as crossed from a to b
  };
  void ensure_graph() const;
  const std::vector<int>& search_tree(int root) const;
  const std::vector<int>& switch_tree(int root) const;
  bool switch_route(int src, int dst, std::vector<LinkUse>& path) const;
  static void append_links(std::vector<LinkUse>& path, const Edge& e, int from);
  std::vector<TopologyVertex> vertices_;
  std::vector<PhysicalLink> links_;
  std::vector<int> hosts_;
  std::vector<int> host_index_of_vertex_;
  std::vector<Edge> edges_;
  struct Graph; // Boost.Graph view, built on first query
  mutable std::unique_ptr<Graph> graph_;
  // Per source host, the destinations it has routes to (sorted) and where each route is kept: the analytical
  // backend looks a route up per transfer, and a map keyed by pair was a third of its time. A deque never moves
  // its elements, so route() can hand out references.
  mutable std::vector<std::vector<std::pair<int, int>>> route_rows_;
  mutable std::deque<std::vector<LinkUse>> route_store_;
  mutable std::map<int, std::vector<int>> search_tree_; // per source vertex: the edge each vertex was reached by
  mutable std::map<int, std::vector<int>> switch_tree_; // per source switch: the edge each switch was reached by
  struct Bundle {
    int first = 0, ports = 1, stage = 0; // links first .. first + ports - 1
  };
  std::vector<Bundle> bundles_;
  std::vector<int> bundle_of_link_; // -1 for a link outside every bundle (sized on the first bundle)
  std::uint64_t ecmp_seed_ = 0;
  void pick_ports(std::vector<LinkUse>& path, int src_host, int dst_host) const;
};

} // namespace cs
