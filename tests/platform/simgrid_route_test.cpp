#include "sim/exec/isolated_run.hpp"
#include "sim/platform/simgrid_platform.hpp"

#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

namespace {

// Every ordered host pair: the links SimGrid puts on the route, in order, must be the graph path's, less the link
// directions that can never bind, whose latency a link of the source's own carries instead.
std::string compare_all_routes(const cs::PlatformSpec& p)
{
  namespace s4u = simgrid::s4u;
  int argc = 1;
  char name[] = "t";
  char* argv[] = {name, nullptr};
  s4u::Engine e(&argc, argv);
  cs::configure_simgrid_network_model(cs::NetworkModel::IDEAL);
  auto sg = cs::instantiate_on_simgrid(p, {});
  const auto& t = p.topology;
  const auto never = cs::links_that_never_bind(p, {});
  int checked = 0;
  for (int a = 0; a < t.host_count(); ++a)
    for (int b = 0; b < t.host_count(); ++b) {
      if (a == b)
        continue;
      std::vector<s4u::Link*> links;
      double latency = 0;
      sg.hosts[a]->route_to(sg.hosts[b], links, &latency);
      std::vector<std::string> expected;
      bool moved = false;
      for (const auto& use : t.route(a, b)) {
        if (never[2 * use.link + (use.up ? 1 : 0)])
          moved = true;
        else
          expected.push_back(t.links()[use.link].name + (use.up ? "_UP" : "_DOWN"));
      }
      if (links.size() != expected.size() + (moved ? 1 : 0))
        return "length differs for " + std::to_string(a) + "->" + std::to_string(b);
      for (std::size_t i = 0; i < expected.size(); ++i)
        if (links[i]->get_name() != expected[i])
          return links[i]->get_name() + " != " + expected[i];
      if (moved && links.back()->get_name().rfind("latency-" + std::to_string(a) + "-", 0) != 0)
        return "no latency link on " + std::to_string(a) + "->" + std::to_string(b);
      if (std::abs(latency - t.route_latency(a, b)) > 1e-15)
        return "latency differs";
      ++checked;
    }
  return "ok " + std::to_string(checked);
}

cs::ClusterParams cluster(const std::string& kind, const std::string& intra, int nodes)
{
  cs::ClusterParams c;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.network.kind = cs::spelled(cs::kNetworkKinds, kind);
  c.intra_node.kind = cs::spelled(cs::kIntraNodeKinds, intra);
  c.network.levels = {cs::FabricLevel{2, 2, {-1}}, cs::FabricLevel{1, 0, {-1}}};
  return c;
}

} // namespace

TEST(SimgridRoutes, EqualGraphPathsOnEveryShape)
{
  const auto& cat = cs::DeviceCatalog::builtin();
  struct Case {
    cs::ClusterParams c;
    const char* device;
    int pairs;
  };
  cs::ClusterParams cpu;
  cpu.racks = 3;
  cpu.hosts_per_rack = 4;
  cpu.network.kind = cs::NetworkKind::TREE;
  cpu.network.racks_per_agg = 2;
  std::vector<Case> cases = {{cluster("fat-tree", "nvswitch", 6), "h100-sxm5", 48 * 47},
                             {cluster("rail-optimized", "nvswitch", 4), "h100-sxm5", 32 * 31},
                             {cluster("star", "nvlink-mesh", 2), "v100-sxm2", 16 * 15},
                             {cluster("fat-tree", "pcie", 2), "rtx-4090", 16 * 15},
                             {cpu, "cpu-node", 12 * 11}};
  for (const auto& c : cases) {
    auto p = cs::build_platform_spec(c.c, *cat.find(c.device));
    EXPECT_EQ(cs::run_isolated([&] { return compare_all_routes(p); }), "ok " + std::to_string(c.pairs)) << c.device;
  }
}
