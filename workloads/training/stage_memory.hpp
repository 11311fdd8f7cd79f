// The memory of one device of a transformer's pipeline: its layers over its virtual stages, and what each holds.
#pragma once

#include "models/transformer/memory_footprint.hpp"
#include "workloads/training/stage_costs.hpp"
#include "workloads/training/training_params.hpp"

#include <functional>
#include <vector>

namespace cs {

/** How the gradient buffer is held: whether ZeRO-2/3 can shard it (the microbatches a replica accumulates per step,
 *  and whether each reduce-scatters its own), and its dtype whole (fp32 main_grad or the model's) and sharded. */
void set_gradient_buffer(MemoryLayout& layout, const TrainingParams& params, const ParallelLayout& parallel);

/** The token dispatcher's buffers on each GPU of the expert-parallel group (DeepEP's NVLink and RDMA queues; 0 for a
 *  dense model or a dispatcher that keeps none). */
double dispatcher_buffer_bytes(const TrainingParams& params, const ParallelLayout& parallel, int gpus_per_node);

/** Memory of device d holding `in_flight` microbatch-chunks, with what the MoE policy holds (`moe`): its
 *  layers (and which of them have experts, and the MTP modules on the last stage) over its chunks, the ZeRO and
 *  expert-parallel shards, and under full recomputation by groups or blocks the inputs kept and layers recomputed. */
std::function<MemoryFootprint(int, int, const MoeMemoryUse&)> stage_memory(const TrainingParams& params,
                                                                           const std::vector<int>& stage_layers,
                                                                           const StageShape& shape, int gpus_per_node);

} // namespace cs
