// What an execution produced: the start and end of every task, and the observer interface that sees it happen.
#pragma once

#include <vector>

namespace cs {

/** Per task start and end times in simulated seconds, indexed by task id. */
struct Timeline {
  std::vector<double> start;
  std::vector<double> end;
  double makespan = 0;
};

/** Subscribers to an execution (recorders, writers). The simgrid executor calls on_task_end in simulated-time
 *  order; the analytical one in the order it schedules tasks (dependencies first). Both are deterministic. */
class ExecutionObserver {
public:
  virtual ~ExecutionObserver() = default;
  virtual void on_task_end(int /*task*/, double /*start*/, double /*end*/) {}
  virtual void on_run_end(double /*makespan*/) {}
};

/** The observer every run has: fills a Timeline. */
class TimelineRecorder : public ExecutionObserver {
public:
  explicit TimelineRecorder(std::size_t tasks)
  {
    timeline_.start.assign(tasks, -1.0);
    timeline_.end.assign(tasks, -1.0);
  }
  void on_task_end(int task, double start, double end) override
  {
    timeline_.start[task] = start;
    timeline_.end[task] = end;
  }
  void on_run_end(double makespan) override { timeline_.makespan = makespan; }
  Timeline& timeline() { return timeline_; }

private:
  Timeline timeline_;
};

} // namespace cs
