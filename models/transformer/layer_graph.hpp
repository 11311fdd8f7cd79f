// Generic layer graphs (workload.model.graph): per-layer costs, and how their layers are cut into pipeline stages.
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/model_params.hpp"

#include <vector>

namespace cs {

/** Per layer, the layers that read its output (file order is a topological order: inputs come first). */
std::vector<std::vector<int>> layer_consumers(const std::vector<GraphLayerParams>& graph);

/** Per layer, its forward seconds for `micro` samples: one roofline-costed kernel of flops and bytes. */
std::vector<double> layer_forward_seconds(const std::vector<GraphLayerParams>& graph, const KernelCostModel& cost,
                                          int micro, const std::string& dtype);

/** Cuts `seconds` (in order) into `stages` contiguous non-empty ranges that minimise the slowest range; returns
 *  each range's first index, plus the end. Ties go to the earliest cut. */
std::vector<int> contiguous_partition(const std::vector<double>& seconds, int stages);

/** Stages of a layer graph: the stage of each layer and the stage DAG with the bytes per sample on each edge. */
struct LayerStages {
  std::vector<int> stage_of;                   // per layer
  std::vector<std::vector<int>> successors;    // per stage; edges go to higher stage numbers
  std::vector<std::vector<double>> edge_bytes; // per stage, per successor: activations per sample
  int branches = 0;                            // series chains the graph decomposes into
};

/** Per layer, its branch: the maximal chains of the graph, numbered by their first layer (a layer joins its
 *  input's branch when it has one input that feeds only it). */
std::vector<int> layer_branches(const std::vector<GraphLayerParams>& graph);

/** For chain schedules: contiguous stages in file order; stage s feeds s + 1 with every activation that crosses
 *  that boundary (a layer's output is relayed through the stages between producer and consumer). */
LayerStages chain_stages(const std::vector<GraphLayerParams>& graph, const std::vector<double>& seconds, int stages);

/** For the graph pipeline. [recon] GraphPipe's series-parallel decomposition and dynamic program, reduced to: the
 *  graph's branches are its maximal chains (a layer joins its input's branch when it has one input that feeds
 *  only it); each branch gets one stage, the spare stages go one by one to the branch whose stages are slowest;
 *  each branch is cut into contiguous stages that minimise its slowest one. Stage edges follow layer edges.
 *  Throws std::invalid_argument when there are fewer stages than branches. */
LayerStages graph_stages(const std::vector<GraphLayerParams>& graph, const std::vector<double>& seconds, int stages);

} // namespace cs
