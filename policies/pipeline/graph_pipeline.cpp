// Graph pipeline (GraphPipe; Jeon et al., ASPLOS'25): pipeline stages form a DAG and independent branches run
// concurrently. [recon] The paper's per-stage schedule is reconstructed as 1F1B whose warm-up on each stage is the
// depth of the DAG below it (its longest path to a sink) instead of its distance to the last of p chained stages.
#include "base/registry.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"

#include <algorithm>

namespace cs {

std::vector<int> depth_to_sink(const std::vector<std::vector<int>>& successors)
{
  const int p = static_cast<int>(successors.size());
  std::vector<int> depth(p, -1);
  // Stages are numbered so that every edge goes forward (the partitioner guarantees it), so one backward sweep
  // sees each stage after all its successors.
  for (int s = p - 1; s >= 0; --s) {
    depth[s] = 0;
    for (int t : successors[s]) {
      if (t <= s || t >= p)
        throw std::invalid_argument("stage edges must go from a lower to a higher stage number");
      depth[s] = std::max(depth[s], depth[t] + 1);
    }
  }
  return depth;
}

/** Stage s runs min(depth(s), m) warm-up forwards, then alternates forward and backward, then drains. On a chain
 *  depth(s) = p - s - 1 and this is 1F1B; on a DAG the bubble is (depth - 1) / m with depth the longest stage path
 *  (stages on parallel branches overlap), and stage s holds depth(s) + 1 microbatches of activations. */
class GraphPipeline : public PipelineSchedule {
public:
  bool runs_stage_dags() const override { return true; }
  std::vector<std::vector<PipelineOp>> order(int p, int chunks, int m) const override
  {
    std::vector<std::vector<int>> chain(p);
    for (int s = 0; s + 1 < p; ++s)
      chain[s] = {s + 1};
    return order_dag(chain, m);
  }
  std::vector<std::vector<PipelineOp>> order_dag(const std::vector<std::vector<int>>& successors, int m) const override
  {
    return warmup_then_alternate(depth_to_sink(successors), m);
  }
};

CS_REGISTER_POLICY(PipelineSchedule, GraphPipeline, "pipeline", "graph-pipeline",
                   "GraphPipe: stages form a DAG, parallel branches run concurrently; 1F1B warm-up by depth [recon]");

} // namespace cs
