// The transformer's shape (`workload.model:`): sizes, attention and MLP variants, published presets, or a layer graph.
#pragma once

#include "base/yaml_reader.hpp"
#include "models/kernels/kernel.hpp"
#include "models/transformer/moe_params.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cs {

/** One layer of a generic layer graph (workload.model.graph): costs per sample, forward pass. */
struct GraphLayerParams {
  std::string name;
  double flops = 0;                // forward FLOPs per sample
  Bytes bytes;                     // forward memory traffic per sample
  double params = 0;               // parameters
  Bytes activations;               // its output per sample: sent to the layers it feeds, kept for backward
  std::vector<std::string> inputs; // earlier layers it reads; none = the model's input
  std::optional<Kernel> kernel;    // one sample's forward as a kernel descriptor (then flops and bytes are its own)
};

class AttentionKind;
class Fp8Recipe;

/** How the attention core runs: fused (scores stay on chip) or through memory. */
enum class AttentionCore {
  FLASH,        // FlashAttention-2
  TRITON,       // the same fused attention in Triton (llm-foundry's attn_impl: triton, 2023), slower
  CUDNN,        // cuDNN's fused attention through Transformer Engine (Megatron-Core on Hopper)
  MATERIALIZED, // QK^T GEMM, softmax, dropout and PV GEMM through memory (Megatron-LM before FlashAttention)
};

enum class Norm { LAYERNORM, RMSNORM };

/** How tokens learn their positions (Megatron-Core --position-embedding-type). Only rope costs kernels of its own:
 *  the rotation of every query and key head; a learned table's lookup and add ride on the embedding's, ALiBi's bias
 *  and T5's relative bias are added inside the attention kernel. */
enum class PositionEmbedding { LEARNED, ROPE, ALIBI, NONE };

/** Activation recomputation (Megatron-Core --recompute-granularity): none; selective, the recompute modules' forward
 *  kernels rerun in backward; full, the whole layer's forward reruns and only its input is kept. */
enum class Recompute { NONE, SELECTIVE, FULL };
/** "none" | "selective" | "full". */
const char* recompute_name(Recompute recompute);
/** The Recompute spelt `name`; std::invalid_argument for any other text. */
Recompute recompute_from_name(const std::string& name);

/** Which layers full recomputation covers (Megatron --recompute-method with --recompute-num-layers): uniform, every
 *  layer, checkpointed in groups of recompute_num_layers (one input kept a group); block, only the first
 *  recompute_num_layers layers of each virtual pipeline stage, the others keeping all their activations. */
enum class RecomputeMethod { UNIFORM, BLOCK };

struct ModelParams {
  int layers = 24;
  int hidden = 2048;
  int ffn = 0; // 0 = 4 * hidden
  int heads = 16;
  int seq = 2048;
  int vocab = 51200;
  std::string dtype = "bf16";
  Recompute recompute = Recompute::NONE;
  // Under selective recomputation, the modules whose forward reruns in backward (Megatron-Core --recompute-modules:
  // core_attn, layernorm, mlp); empty = core_attn, Megatron's default.
  std::vector<std::string> recompute_modules;
  RecomputeMethod recompute_method = RecomputeMethod::UNIFORM; // under full recomputation
  int recompute_num_layers =
      0; // under full: the group size (uniform) or the layers recomputed (block); 0 = 1 (uniform)
  /** Whether selective recomputation reruns `module` (core_attn, layernorm, mlp). */
  bool recomputes(const std::string& module) const;
  AttentionCore attention = AttentionCore::FLASH;
  std::string preset;       // filled in first, then keys given next to it override (see model_presets())
  int kv_heads = 0;         // 0 = heads (multi-head attention); fewer = grouped-query attention
  int head_dim = 0;         // query, key and value width per head (0 = hidden / heads; Megatron's kv_channels)
  bool qk_norm = false;     // an RMSNorm over each query and key head before attention (Qwen3, OLMo 2)
  std::string mlp = "gelu"; // a registered MLP kind: gelu (up, GeLU, down) | swiglu (gate and up, SiLU product, down)
  Norm norm = Norm::LAYERNORM;                         // rmsnorm: weight only
  PositionEmbedding position_embedding = PositionEmbedding::LEARNED; // Megatron-Core's default, learned_absolute
  std::shared_ptr<const AttentionKind> attention_kind; // a kind configured by its block (model.<kind>); null = gqa
  std::shared_ptr<const Fp8Recipe> fp8; // the FP8 recipe of the layers' linear layers; null = none (model.fp8)
  bool tie_embeddings = true;           // the output layer reuses the input embedding
  bool bias = true;   // linear layers and layernorms have biases (GPT-2, Megatron); MPT and Llama have none
  bool causal = true; // decoder self-attention: each token attends to the ones before it
  std::vector<GraphLayerParams> graph; // non-empty: this layer graph replaces the transformer
  MoeParams moe;                       // experts instead of the dense MLP in some layers
  // Multi-token prediction modules after the last layer (DeepSeek-V3: 1; Megatron-Core --mtp-num-layers): each adds a
  // projection of the hidden state and the next token's embedding, one more layer like the last, and a loss through
  // the shared output layer, on the last pipeline stage.
  int mtp_depth = 0;
  int kv() const { return kv_heads > 0 ? kv_heads : heads; }
};

/** Named model configurations for `model.preset`. */
const std::map<std::string, ModelParams>& model_presets();

/** Reads `workload.model:` (preset first, then the keys given next to it), filling ffn = 4 x hidden when absent. */
void read_model(ObjectReader m, ModelParams& model);

} // namespace cs
