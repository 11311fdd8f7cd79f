// What an MoE layer costs on one GPU: the router, top-k and token permutations around the all-to-alls, the shared
// experts, and each routed expert's MLP over the tokens it actually gets (GEMMs priced by the cost stack, waves
// included, so small and uneven expert batches cost what they cost).
#pragma once

#include "models/cost/kernel_cost_model.hpp"
#include "models/transformer/pass_cost.hpp"

#include <map>
#include <unordered_map>
#include <vector>

namespace cs {

/** Router GEMM (tokens x hidden x experts), softmax and top-k over the scores, the permutation of routed tokens
 *  into expert order before dispatch and its inverse (weighted by the gates) after combine, both memory-bound
 *  gathers of top_k copies of each token; backward mirrors them. */
PassKernels moe_routing_kernels(const ModelParams& model, double tokens);

/** The shared experts (dense MLPs every token runs), split over `tp` ranks. */
PassKernels shared_expert_kernels(const ModelParams& model, double tokens, int tp, const FrameworkProfile& framework);

/** An MoE layer's kernels besides its routed experts on one TP rank: the layer without its MLP (norms, attention,
 *  projections), the router and permutations, and the shared experts unless `shared` is false. */
PassKernels moe_layer_kernels(const ModelParams& model, const LayerShape& shape, bool shared = true);

/** A GPU's routed experts at the routing's mean load: each of its experts / ep experts gets the microbatch's tokens on
 *  the GPU (its share under MoE parallel folding) x top_k over them. */
struct MeanExpertLoad {
  int experts = 1;   // on one GPU
  double tokens = 0; // each
};
MeanExpertLoad mean_expert_load(const ModelParams& model, const LayerShape& shape);

/** One routed expert's passes over n tokens (its ffn split over `etp` ranks), memoised by whole token counts. */
class ExpertCost {
public:
  ExpertCost(const ModelParams& model, const KernelCostModel& cost, const FrameworkProfile& framework, int etp);
  /** Forward, whole backward and its weight-gradient part; zero for no tokens. */
  const PieceTimes& of(double tokens) const;
  /** One GPU's experts with `tokens` each (zeros skipped): the sum of `of`, or under the framework's grouped GEMM one
   *  GEMM over all their tokens for each of the MLP's GEMMs, the weight gradients as a batch of one per expert. */
  PieceTimes of_gpu(const std::vector<double>& tokens) const;
  /** The kernels `of_gpu` prices for these experts: each expert's MLP in turn, or under grouped GEMMs one kernel per
   *  GEMM over every expert's tokens (weight gradients a batch of one per expert). */
  PassKernels kernels_of_gpu(const std::vector<double>& tokens) const;

private:
  /** The passes of one expert MLP's kernels (full recomputation and moe_act included). */
  PieceTimes times(const PassKernels& k) const;
  /** Under the moe_act recompute module, the activation's forward run again in backward. */
  double activation_again(const PassKernels& k) const;

  const ModelParams& m_;
  const KernelCostModel& cost_;
  FrameworkProfile framework_;
  int etp_;
  // Looked up, never iterated (a skewed 2,048-GPU step asks for each simulated rank of every layer and microbatch).
  struct PairHash {
    std::size_t operator()(const std::pair<long long, int>& k) const
    {
      return std::hash<long long>()(k.first) * 31 + std::hash<int>()(k.second);
    }
  };
  mutable std::unordered_map<long long, PieceTimes> memo_;
  mutable std::unordered_map<std::pair<long long, int>, PieceTimes, PairHash> grouped_memo_;
};

} // namespace cs
