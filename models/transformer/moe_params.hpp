// A mixture-of-experts transformer's expert layers (`workload.model.moe:`): how many experts, how tokens are routed
// to them, which layers have them, and their parameter and FLOP counts.
#pragma once

#include "base/yaml_reader.hpp"

#include <string>

namespace cs {

struct ModelParams;

/** Megatron-Core's vocabulary where it has one (num_experts, moe_router_topk, moe_ffn_hidden_size,
 *  moe_shared_expert_intermediate_size, moe_layer_freq, moe_expert_capacity_factor). */
struct MoeParams {
  int experts = 0;            // routed experts per MoE layer; 0 = a dense model
  int top_k = 2;              // experts each token is sent to
  int expert_ffn = 0;         // inner size of one expert's MLP (0 = the model's ffn)
  int shared_experts = 0;     // experts every token also runs (DeepSeek-MoE, Qwen2-MoE), not routed
  int shared_ffn = 0;         // inner size of one shared expert (0 = expert_ffn)
  int every = 1;              // an MoE layer every k-th layer (Switch: 2)
  int first_dense = 0;        // the first layers keep a dense MLP (DeepSeek-MoE: 1)
  double capacity_factor = 0; // tokens an expert takes per step, as a multiple of the even share; 0 (not given) =
                              // dropless
  std::string dispatcher = "alltoall"; // a registered token dispatcher (models/moe/token_dispatcher.hpp)
  int max_nodes_per_token = 0;         // node-limited routing: a token's experts on at most this many nodes (0: any)
  int deepep_sms = 20; // SMs DeepEP's kernels take while they run (Megatron-Core moe_deepep_num_sms; DeepEP's default)
  int hybridep_sms = 16; // SMs HybridEP's kernels take while they run (Megatron-Core moe_hybridep_num_sms's default)
  bool enabled() const { return experts > 0; }
  /** The SMs the chosen dispatcher's kernels take (the flex backends'; NCCL's all-to-all ignores it). */
  int dispatcher_sms() const { return dispatcher == "hybridep" ? hybridep_sms : deepep_sms; }
};

/** Reads `model.moe:` (absent: dense). */
void read_moe(ObjectReader& r, MoeParams& moe);
/** Cross-checks against the model's shape (top_k <= experts); fails at the offending key. */
void check_moe(const ObjectReader& r, const MoeParams& moe, int layers);

/** Whether layer `l` (0-based) has experts instead of a dense MLP. */
bool is_moe_layer(const MoeParams& moe, int l);
/** MoE layers among `layers`. */
int moe_layer_count(const MoeParams& moe, int layers);
/** The inner sizes with defaults applied. */
int expert_ffn_of(const ModelParams& model);
int shared_ffn_of(const ModelParams& model);
/** Weights of one routed expert's MLP (two matrices, three with SwiGLU; no biases). */
double expert_parameters(const ModelParams& model);
/** Weights of all shared experts of one layer. */
double shared_expert_parameters(const ModelParams& model);
/** The router (gate) of one layer: hidden x experts. */
double router_parameters(const ModelParams& model);

} // namespace cs
