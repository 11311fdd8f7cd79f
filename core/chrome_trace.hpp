// The Chrome trace-event writer (opens in Perfetto): one process per node or host, one thread per stream, one
// complete event per task. Every workload writes its trace through it.
#pragma once

#include "core/task_graph.hpp"
#include "core/timeline.hpp"
#include "platform/platform_spec.hpp"

#include <nlohmann/json.hpp>
#include <string>

namespace cs {

class ChromeTrace {
public:
  void process(int pid, const std::string& name);
  void thread(int pid, int tid, const std::string& name);
  /** A complete event from `start` to `end` (seconds); `args` is shown with it. */
  void complete(const std::string& name, const std::string& category, int pid, int tid, double start, double end,
                nlohmann::ordered_json args = nlohmann::ordered_json::object());
  /** A line the viewer shows with the trace (Chrome's otherData): what the trace leaves out, say. */
  void note(const std::string& text) { note_ = text; }
  std::string dump() const;

private:
  nlohmann::ordered_json events_ = nlohmann::ordered_json::array();
  std::string note_;
};

/** A task graph's run: a process per node (per host on CPU clusters), a thread per stream that has an event.
 *  Zero-length delays (joins and barriers the graph needs, not work) are left out. `note` says what the graph
 *  stands for beyond itself (the TP ranks and replicas it folds), shown with the trace and in each process name. */
std::string chrome_trace_json(const TaskGraph& graph, const Timeline& timeline, const PlatformSpec& platform,
                              const std::string& note = "", const std::string& process_suffix = "");

} // namespace cs
