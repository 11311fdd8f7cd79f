// Wall time to simulate one 1 GiB all-to-all on 64, 256 and 1,024 GPUs (8 per node) on both backends: the analytical
// backend's default on an idle non-blocking fabric (the closed form, DESIGN.md §3), its list-scheduled flows
// (`pricing: flows`, what it does under background traffic or oversubscription), and simgrid's flows.
#include "models/collectives/collective_model.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/isolated_run.hpp"
#include "workloads/collective/collective_sweep.hpp"

#include <chrono>
#include <cstdio>
#include <string>

int main(int argc, char** argv)
{
  const double bytes = argc > 1 ? std::stod(argv[1]) : 1073741824.0;
  std::printf("%6s %8s %10s %10s %10s %12s %12s %12s %8s %8s\n", "gpus", "flows", "closed(ms)", "flows(ms)",
              "simgrid(ms)", "closed wall", "flows wall", "simgrid wall", "cf/sg", "fl/sg");
  for (int gpus : {64, 256, 1024}) {
    cs::ClusterParams c;
    c.device = "h100-sxm5";
    c.nodes = gpus / 8;
    c.gpus_per_node = 8;
    c.network.kind = cs::NetworkKind::FAT_TREE; // non-blocking two-level fat-tree, one 400 Gb/s NIC per GPU
    const auto& device = *cs::DeviceCatalog::builtin().find("h100-sxm5");
    cs::PlatformSpec p = cs::build_platform_spec(c, device);
    cs::TaskGraph g;
    cs::StreamPool pool(g);
    cs::CollectiveRequest req;
    req.kind = "all-to-all";
    req.algorithm = "direct";
    for (int r = 0; r < gpus; ++r)
      req.hosts.push_back(r);
    req.bytes = bytes;
    auto choice = cs::choose_collective(req.kind, req.algorithm, bytes, cs::group_shape(p, req.hosts));
    cs::expand_collective(g, pool, p, req, choice);
    g.finalize();
    int flows = 0;
    for (const auto& t : g.tasks())
      flows += t.kind == cs::TaskKind::TRANSFER;
    // The analytical default: the tuner's closed form, run as the sweep's one-delay graph (the sweep builder's
    // expansion, kept only to count bytes per link tier, is not part of pricing and is left out here).
    auto c0 = std::chrono::steady_clock::now();
    cs::TaskGraph priced;
    {
      auto chosen = cs::choose_collective(req.kind, req.algorithm, bytes, cs::group_shape(p, req.hosts));
      priced.add_delay(priced.add_stream(0, "sweep"), chosen.seconds, "all-to-all", {});
      priced.finalize();
    }
    double closed = cs::run_analytical(priced, p).makespan;
    double closed_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    auto t0 = std::chrono::steady_clock::now();
    double analytical = cs::run_analytical(g, p).makespan;
    double an_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string out = cs::run_isolated([&] {
      auto t = std::chrono::steady_clock::now();
      double m = cs::run_simgrid(g, p).makespan;
      double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
      return std::to_string(m) + " " + std::to_string(w);
    });
    double simgrid = std::stod(out), sg_wall = std::stod(out.substr(out.find(' ')));
    std::printf("%6d %8d %10.3f %10.3f %10.3f %11.6fs %11.4fs %11.3fs %8.3f %8.3f\n", gpus, flows, closed * 1e3,
                analytical * 1e3, simgrid * 1e3, closed_wall, an_wall, sg_wall, closed / simgrid, analytical / simgrid);
  }
  return 0;
}
