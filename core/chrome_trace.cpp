#include "core/chrome_trace.hpp"

namespace cs {

using Json = nlohmann::ordered_json;

void ChromeTrace::process(int pid, const std::string& name)
{
  events_.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
}

void ChromeTrace::thread(int pid, int tid, const std::string& name)
{
  events_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
}

void ChromeTrace::complete(const std::string& name, const std::string& category, int pid, int tid, double start,
                           double end, Json args)
{
  events_.push_back({{"name", name},
                     {"cat", category},
                     {"ph", "X"},
                     {"pid", pid},
                     {"tid", tid},
                     {"ts", start * 1e6},
                     {"dur", (end - start) * 1e6},
                     {"args", std::move(args)}});
}

std::string ChromeTrace::dump() const
{
  nlohmann::ordered_json doc = {{"traceEvents", events_}, {"displayTimeUnit", "ms"}};
  if (!note_.empty())
    doc["otherData"] = {{"note", note_}};
  return doc.dump();
}

std::string chrome_trace_json(const TaskGraph& g, const Timeline& tl, const PlatformSpec& platform,
                              const std::string& note, const std::string& process_suffix)
{
  const Topology& topo = platform.topology;
  ChromeTrace trace;
  trace.note(note);
  // A zero-length delay is bookkeeping (a collective's barrier, a readiness join): not shown, and a stream holding
  // nothing else (a collective's barrier channel) gets no thread.
  auto shown = [&](std::size_t id) {
    const Task& t = g.task(static_cast<int>(id));
    return t.kind != TaskKind::DELAY || tl.end[id] > tl.start[id];
  };
  std::vector<char> used(g.streams().size(), 0);
  for (std::size_t id = 0; id < g.size(); ++id)
    if (shown(id))
      used[g.task(static_cast<int>(id)).stream] = 1;
  std::vector<int> seen_machine(platform.machines, 0);
  for (std::size_t s = 0; s < g.streams().size(); ++s) {
    if (!used[s])
      continue;
    const Stream& st = g.streams()[s];
    const auto& v = topo.vertex(topo.hosts()[st.host]);
    if (!seen_machine[v.machine]++)
      trace.process(v.machine, (platform.cpu_cluster ? v.name : "node" + std::to_string(v.machine)) + process_suffix);
    trace.thread(v.machine, static_cast<int>(s), v.name + " " + st.name);
  }
  for (std::size_t id = 0; id < g.size(); ++id) {
    if (!shown(id))
      continue;
    const Task& t = g.task(static_cast<int>(id));
    const auto& v = topo.vertex(topo.hosts()[g.streams()[t.stream].host]);
    Json args = Json::object();
    const auto& L = t.labels;
    if (L.iteration >= 0)
      args["iteration"] = L.iteration;
    if (L.microbatch >= 0)
      args["microbatch"] = L.microbatch;
    if (L.layer >= 0)
      args["layer"] = L.layer;
    if (L.bucket >= 0)
      args["bucket"] = L.bucket;
    if (t.kind == TaskKind::TRANSFER) {
      args["bytes"] = t.bytes;
      args["to"] = topo.vertex(topo.hosts()[t.dst]).name;
    }
    if (t.model)
      args["cost_model"] = g.names()[t.model];
    trace.complete(g.names()[t.name], g.names()[L.phase], v.machine, t.stream, tl.start[id], tl.end[id],
                   std::move(args));
  }
  return trace.dump();
}

} // namespace cs
