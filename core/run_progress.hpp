// How far the current run is, for a progress line on long runs: tasks finished of the graph being executed.
#pragma once

#include "core/timeline.hpp"

#include <atomic>
#include <cstddef>

namespace cs {

/** Process-wide counters the executors advance and a reporter thread reads (relaxed atomics: a display only). */
struct RunProgress {
  std::atomic<std::size_t> done{0};
  std::atomic<std::size_t> total{0}; // 0 = no task graph running (e.g. the actor-driven MapReduce runtime)
  // A command that runs many graphs (the planner) names its stage and counts its items; stage null = none.
  std::atomic<const char*> stage{nullptr};
  std::atomic<std::size_t> stage_done{0};
  std::atomic<std::size_t> stage_total{0};
};
RunProgress& run_progress();

/** Names a stage of a long command and its item count in run_progress() while it lives (`stage` must outlive it). */
class ProgressStage {
public:
  ProgressStage(const char* stage, std::size_t items);
  ~ProgressStage();
  ProgressStage(const ProgressStage&) = delete;
  ProgressStage& operator=(const ProgressStage&) = delete;
  void advance() { run_progress().stage_done.fetch_add(1, std::memory_order_relaxed); }
};

/** Counts finished tasks into run_progress(); run_backend adds one to every run. */
class ProgressObserver : public ExecutionObserver {
public:
  explicit ProgressObserver(std::size_t tasks);
  ~ProgressObserver() override;
  void on_task_end(int, double, double) override { run_progress().done.fetch_add(1, std::memory_order_relaxed); }
};

} // namespace cs
