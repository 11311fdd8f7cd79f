// The planner's decision tree: the parallel configurations Galvatron's tree generates for a transformer on N GPUs.
#pragma once

#include "sim/plan/planner.hpp"

#include <string>
#include <vector>

namespace cs {

/** TP inside a node (powers of two), CP for long sequences, then the PP degree, the rest data parallel; under each,
 *  micro-batch sizes, the registered schedules that can run the shape, recomputation, ZeRO and (MoE) ep and etp; all
 *  of it for each of the `fp8` recipes ("none": bf16 GEMMs); selective recomputation of the scenario's modules, or
 *  with `search_recompute_modules` of each set of Megatron-Core's recompute modules that matters for the model. Plans
 *  keep the scenario's rank order (workload.parallel.placement); with `search_placement` a pipelined plan also comes in
 *  the other one (without pipeline parallelism the two orders are the same). An MoE model's plans come with each of
 *  `dispatchers` (empty: the scenario's own dispatcher). With `search_hsdp` a dense plan with ZeRO (and one copy of
 *  the model) also comes as HSDP: shard groups of the data-parallel replicas one node holds, two nodes, four, ...
 *  (parallel.dp_replicate the rest). */
std::vector<Plan> enumerate_plans(const Scenario& base, int gpus, const std::vector<std::string>& fp8,
                                  bool search_recompute_modules, bool search_placement = false,
                                  const std::vector<std::string>& dispatchers = {}, bool search_hsdp = false);

} // namespace cs
