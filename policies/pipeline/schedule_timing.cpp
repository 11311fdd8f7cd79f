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

std::vector<double> schedule_iteration_ends(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map,
                                            const std::function<double(int, const PipelineOp&)>& seconds,
                                            const std::vector<double>& tail, int iterations)
{
  const int devices = static_cast<int>(order.size()), stages = map.stages();
  int microbatches = 0;
  for (const auto& ops : order)
    for (const PipelineOp& op : ops)
      microbatches = std::max(microbatches, op.microbatch + 1);
  std::vector<double> free_at(devices, 0), ends;
  for (int it = 0; it < iterations; ++it) {
    // Ends of each microbatch's forward and gradient-sending pass per virtual stage; -1 until run.
    std::vector<double> forward_end(std::size_t(microbatches) * stages, -1), gradient_end = forward_end;
    std::vector<std::size_t> next(devices, 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (int d = 0; d < devices; ++d)
        for (; next[d] < order[d].size(); ++next[d]) {
          const PipelineOp& op = order[d][next[d]];
          const int vs = map.stage(d, op.chunk);
          const std::size_t at = std::size_t(op.microbatch) * stages + vs;
          double ready = free_at[d];
          if (op.forward() && vs > 0) {
            if (forward_end[at - 1] < 0)
              break;
            ready = std::max(ready, forward_end[at - 1]);
          } else if (op.sends_gradient() && vs + 1 < stages) {
            if (gradient_end[at + 1] < 0)
              break;
            ready = std::max(ready, gradient_end[at + 1]);
          }
          free_at[d] = ready + seconds(vs, op);
          if (op.forward())
            forward_end[at] = free_at[d];
          else if (op.sends_gradient())
            gradient_end[at] = free_at[d];
          progress = true;
        }
    }
    for (int d = 0; d < devices; ++d) {
      if (next[d] < order[d].size())
        throw std::logic_error("the schedule's order waits for a pass that never runs");
      free_at[d] += tail.empty() ? 0.0 : tail[d];
    }
    ends.push_back(*std::max_element(free_at.begin(), free_at.end()));
  }
  return ends;
}

} // namespace cs
