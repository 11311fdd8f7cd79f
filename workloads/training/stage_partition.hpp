// How a transformer's layers are cut into the virtual stages of a pipeline: even, balanced around the embedding and
// the output layer, with the embedding's and the loss's slots, or as the scenario lists them.
#pragma once

#include "policies/pipeline/stage_map.hpp"
#include "workloads/training/training_params.hpp"

#include <vector>

namespace cs {

/** Layers per virtual stage of `map`. Even: layers / stages each, any remainder to the first stages. Balanced: the
 *  device that runs the output layer (head_s per microbatch) and the one that runs the embedding (embedding_s) keep
 *  the numbers of layers that make the slowest device fastest; the devices between share the rest; each device
 *  spreads its layers over its chunks. Times are forward + backward seconds. A map with several copies of the model
 *  (DualPipe) cuts each alike, as a pipeline of one stage a device. */
std::vector<int> partition_layers(int layers, const StageMap& map, double layer_s, double head_s, bool balanced,
                                  double embedding_s = 0);

/** The layers of each virtual stage a scenario runs: its stage_layers (one copy's, repeated for each copy), or its
 *  embedding's and loss's slots taken from an even cut, or partition_layers. Throws std::invalid_argument when
 *  stage_layers does not list one entry per stage of a copy. */
std::vector<int> stage_layer_counts(const TrainingParams& params, const StageMap& map, double layer_s, double head_s,
                                    double embedding_s);

} // namespace cs
