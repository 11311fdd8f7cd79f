// The cost of one pass over a list of kernels: summed durations and the cost model that answered most of it.
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/transformer.hpp"

#include <string>
#include <vector>

namespace cs {

struct PassCost {
  double seconds = 0;
  double weight_seconds = 0; // the kernels flagged as weight gradients
  std::string model;         // the model that answered the largest share of the time (for traces)
};

/** Each kernel lasts at least `kernel_gap` seconds: the host launches kernels one at a time, so a GPU that finishes a
 *  kernel sooner waits for the next launch. */
PassCost pass_cost(const KernelCostModel& cost, const std::vector<NamedKernel>& kernels, double kernel_gap = 0);

/** One piece of a model (a layer, the head, the embedding) for one microbatch on one TP rank. */
struct PieceTimes {
  double forward = 0, backward = 0, weight = 0;
  std::string model;
};

/** One layer's TP collectives for one microbatch (seconds). A number is two blocking collectives of that length in
 *  each pass; under asynchronous backward communication the backward's blocking ones differ and the rest run beside
 *  the column-parallel GEMMs. */
struct TpCollectives {
  double each = 0;           // each of the forward's two (and the backward's, unless backward_each is set)
  double backward_each = -1; // each of the backward's two blocking collectives when they differ (-1: each)
  double backward_async = 0; // all of the backward's collectives issued beside its column-parallel GEMMs
  double amax_each = 0; // one all-reduce of an amax over the TP group, blocking: two in each pass (current FP8 scaling
                        // under sequence parallelism)
  TpCollectives(double seconds = 0) : each(seconds) {} // NOLINT: a plain number keeps the blocking pattern
};

/** A piece's passes with their TP collectives (blocking; pipelined with the pass's GEMMs over `tp` chunks under the
 *  framework's tp_comm_overlap; or, in backward, beside the column-parallel GEMMs), the forward run again inside
 *  backward under full recomputation (under selective, the forward kernels of the recompute `modules`: core_attn,
 *  layernorm, mlp; none given = core_attn, materialised attention's core), and the weight-gradient part of backward. */
PieceTimes piece_times(const PassKernels& k, const KernelCostModel& cost, const FrameworkProfile& fw,
                       const TpCollectives& tp_s, Recompute recompute, int tp = 1,
                       const std::vector<std::string>& modules = {});

} // namespace cs
