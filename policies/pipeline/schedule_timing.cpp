#include "policies/pipeline/schedule_timing.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs {

std::vector<double> schedule_iteration_ends(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map,
                                            const std::function<double(int, Pass)>& seconds,
                                            const std::vector<double>& tail, int iterations)
{
  return schedule_iteration_ends(
      order, map, [&seconds](int vs, const PipelineOp& op) { return seconds(vs, op.pass); }, tail, iterations);
}

namespace {

// One op as the timing loop reads it: its length (asked once, the same every iteration), where its microbatch's
// pass is recorded, and what it waits for. The planner times thousands of schedules; reading these off the ops and
// the map again for each iteration, through the length callback, was about a third of that.
struct TimedOp {
  double seconds = 0;
  std::size_t at = 0; // microbatch x stages + virtual stage
  bool forward = false, sends_gradient = false;
  bool first_stage = false, last_stage = false;
};

} // namespace

std::vector<double> schedule_iteration_ends(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map,
                                            const std::function<double(int, const PipelineOp&)>& seconds,
                                            const std::vector<double>& tail, int iterations)
{
  std::vector<std::vector<double>> table(order.size());
  for (std::size_t d = 0; d < order.size(); ++d)
    for (const PipelineOp& op : order[d])
      table[d].push_back(seconds(map.stage(static_cast<int>(d), op.chunk), op));
  return schedule_iteration_ends(order, map, table, tail, iterations);
}

std::vector<double> schedule_iteration_ends(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map,
                                            const std::vector<std::vector<double>>& seconds,
                                            const std::vector<double>& tail, int iterations)
{
  const int devices = static_cast<int>(order.size()), stages = map.stages();
  // Whether each virtual stage begins or ends its chain, asked once per stage rather than once per op.
  std::vector<char> first(stages), last(stages);
  for (int vs = 0; vs < stages; ++vs) {
    first[vs] = map.chain_first(vs);
    last[vs] = map.chain_last(vs);
  }
  std::vector<std::vector<TimedOp>> ops(devices);
  int microbatches = 0;
  for (int d = 0; d < devices; ++d) {
    ops[d].reserve(order[d].size());
    for (std::size_t i = 0; i < order[d].size(); ++i) {
      const PipelineOp& op = order[d][i];
      const int vs = map.stage(d, op.chunk);
      microbatches = std::max(microbatches, op.microbatch + 1);
      ops[d].push_back({seconds[d][i], std::size_t(op.microbatch) * stages + vs, op.forward(), op.sends_gradient(),
                        first[vs] != 0, last[vs] != 0});
    }
  }
  std::vector<double> free_at(devices, 0), ends;
  std::vector<double> forward_end(std::size_t(microbatches) * stages), gradient_end(forward_end.size());
  std::vector<std::size_t> next(devices);
  for (int it = 0; it < iterations; ++it) {
    // Ends of each microbatch's forward and gradient-sending pass per virtual stage; -1 until run.
    std::fill(forward_end.begin(), forward_end.end(), -1.0);
    std::fill(gradient_end.begin(), gradient_end.end(), -1.0);
    std::fill(next.begin(), next.end(), std::size_t{0});
    for (bool progress = true; progress;) {
      progress = false;
      for (int d = 0; d < devices; ++d) {
        // The device's clock stays in a register while it runs (through memory, each op waited on the last's store).
        double clock = free_at[d];
        std::size_t i = next[d];
        const std::vector<TimedOp>& here = ops[d];
        for (; i < here.size(); ++i) {
          const TimedOp& op = here[i];
          if (op.forward && !op.first_stage) {
            const double before = forward_end[op.at - 1];
            if (before < 0)
              break;
            clock = std::max(clock, before);
          } else if (op.sends_gradient && !op.last_stage) {
            const double before = gradient_end[op.at + 1];
            if (before < 0)
              break;
            clock = std::max(clock, before);
          }
          clock += op.seconds;
          if (op.forward)
            forward_end[op.at] = clock;
          else if (op.sends_gradient)
            gradient_end[op.at] = clock;
        }
        progress = progress || i != next[d];
        next[d] = i;
        free_at[d] = clock;
      }
    }
    for (int d = 0; d < devices; ++d) {
      if (next[d] < ops[d].size())
        throw std::logic_error("the schedule's order waits for a pass that never runs");
      free_at[d] += tail.empty() ? 0.0 : tail[d];
    }
    ends.push_back(*std::max_element(free_at.begin(), free_at.end()));
  }
  return ends;
}

} // namespace cs
