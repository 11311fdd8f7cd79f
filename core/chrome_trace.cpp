#include "core/chrome_trace.hpp"

#include <nlohmann/json.hpp>

namespace cs {

std::string chrome_trace_json(const TaskGraph& g, const Timeline& tl, const PlatformSpec& platform)
{
  using json = nlohmann::ordered_json;
  const Topology& topo = platform.topology;
  json events = json::array();
  std::vector<int> seen_machine(platform.machines, 0);
  for (std::size_t s = 0; s < g.streams().size(); ++s) {
    const Stream& st = g.streams()[s];
    const auto& v = topo.vertex(topo.hosts()[st.host]);
    if (!seen_machine[v.machine]++)
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", v.machine},
                        {"args", {{"name", platform.cpu_cluster ? v.name : "node" + std::to_string(v.machine)}}}});
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", v.machine},
                      {"tid", s},
                      {"args", {{"name", v.name + " " + st.name}}}});
  }
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Task& t = g.task(static_cast<int>(id));
    const auto& v = topo.vertex(topo.hosts()[g.streams()[t.stream].host]);
    json args = json::object();
    const auto& L = t.labels;
    if (L.iteration >= 0)
      args["iteration"] = L.iteration;
    if (L.microbatch >= 0)
      args["microbatch"] = L.microbatch;
    if (L.layer >= 0)
      args["layer"] = L.layer;
    if (t.kind == TaskKind::TRANSFER) {
      args["bytes"] = t.bytes;
      args["to"] = topo.vertex(topo.hosts()[t.dst]).name;
    }
    if (t.model)
      args["cost_model"] = g.names()[t.model];
    events.push_back({{"name", g.names()[t.name]},
                      {"cat", g.names()[L.phase]},
                      {"ph", "X"},
                      {"pid", v.machine},
                      {"tid", t.stream},
                      {"ts", tl.start[id] * 1e6},
                      {"dur", (tl.end[id] - tl.start[id]) * 1e6},
                      {"args", args}});
  }
  json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return doc.dump();
}

} // namespace cs
