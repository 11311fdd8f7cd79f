// Engine throughput: tasks/s of both backends on ring-exchange graphs, and the same activities on raw SimGrid.
#include "platform/platform_spec.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/isolated_run.hpp"
#include "sim/platform/simgrid_platform.hpp"

#include <chrono>
#include <cstdio>
#include <simgrid/s4u.hpp>
#include <string>

namespace {

using clock_type = std::chrono::steady_clock;

cs::PlatformSpec platform_of(int gpus)
{
  cs::ClusterParams c;
  c.gpus_per_node = 8;
  c.nodes = gpus / 8;
  c.network.levels = {cs::FabricLevel{}, cs::FabricLevel{}};
  static const cs::DeviceCatalog& cat = cs::DeviceCatalog::builtin();
  return cs::build_platform_spec(c, *cat.find("h100-sxm5"));
}

// Each device: `rounds` x (compute 1 ms, send 1 MB to the next device); a send waits for the previous device's
// send of the round before (a ring pipeline), so every stream waits on another.
cs::TaskGraph ring_graph(int devices, int rounds)
{
  cs::TaskGraph g;
  std::vector<int> compute, comm;
  for (int d = 0; d < devices; ++d) {
    compute.push_back(g.add_stream(d, "compute"));
    comm.push_back(g.add_stream(d, "comm"));
  }
  std::vector<int> last_send(devices, -1);
  for (int r = 0; r < rounds; ++r) {
    std::vector<int> sends(devices);
    for (int d = 0; d < devices; ++d) {
      int c = g.add_compute(compute[d], 1e-3, "kernel", "fixed", {});
      int s = g.add_transfer(comm[d], d, (d + 1) % devices, 1e6, "send", {});
      g.add_dependency(c, s);
      if (last_send[(d + devices - 1) % devices] >= 0)
        g.add_dependency(last_send[(d + devices - 1) % devices], c);
      sends[d] = s;
    }
    last_send = sends;
  }
  g.finalize();
  return g;
}

double raw_simgrid_rate(int devices, int rounds)
{
  std::string out = cs::run_isolated([&] {
    namespace s4u = simgrid::s4u;
    int argc = 1;
    char name[] = "raw";
    char* argv[] = {name, nullptr};
    s4u::Engine e(&argc, argv);
    xbt_log_control_set("root.thresh:critical");
    cs::configure_simgrid_network_model(cs::NetworkModel::IDEAL);
    cs::PlatformSpec p = platform_of(devices);
    std::vector<std::pair<int, int>> pairs;
    for (int d = 0; d < devices; ++d)
      pairs.emplace_back(d, (d + 1) % devices);
    cs::SimgridPlatform sg = cs::instantiate_on_simgrid(p, pairs);
    // The same activities without clustersim: one actor per device runs compute then send, round after round
    // (no cross-device waits, so this is an upper bound on SimGrid's own rate for these activities).
    for (int d = 0; d < devices; ++d)
      s4u::Actor::create("dev", sg.hosts[d], [&, d] {
        for (int r = 0; r < rounds; ++r) {
          s4u::this_actor::execute(1e-3 * cs::kGpuHostSpeed);
          s4u::Comm::sendto(sg.hosts[d], sg.hosts[(d + 1) % devices], 1000000);
        }
      });
    auto t0 = clock_type::now();
    e.run();
    double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    return std::to_string(2.0 * devices * rounds / s);
  });
  return std::stod(out);
}

} // namespace

int main(int argc, char** argv)
{
  int rounds = argc > 1 ? std::stoi(argv[1]) : 20;
  std::printf("%8s %10s %16s %16s %16s %12s\n", "devices", "tasks", "analytical t/s", "simgrid t/s", "raw simgrid a/s",
              "simgrid/raw");
  for (int devices : {256, 1024, 4096}) {
    cs::PlatformSpec p = platform_of(devices);
    cs::TaskGraph g = ring_graph(devices, rounds);
    for (int d = 0; d < devices; ++d)
      p.topology.route(d, (d + 1) % devices); // warm the route cache outside the timing
    auto t0 = clock_type::now();
    int repeats = 5;
    for (int i = 0; i < repeats; ++i)
      cs::run_analytical(g, p);
    double analytical = repeats * g.size() / std::chrono::duration<double>(clock_type::now() - t0).count();
    double simgrid = std::stod(cs::run_isolated([&] {
      auto t = clock_type::now();
      cs::run_simgrid(g, p);
      return std::to_string(g.size() / std::chrono::duration<double>(clock_type::now() - t).count());
    }));
    double raw = raw_simgrid_rate(devices, rounds);
    std::printf("%8d %10zu %16.0f %16.0f %16.0f %11.0f%%\n", devices, g.size(), analytical, simgrid, raw,
                100.0 * simgrid / raw);
  }
  return 0;
}
