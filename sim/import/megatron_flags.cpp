#include "sim/import/megatron_flags.hpp"

#include <cstdio>

namespace cs {

bool megatron_switch(const std::string& flag)
{
  // clang-format off
  static const std::set<std::string> s{
      "bf16", "fp16", "swiglu", "squared-relu", "untie-embeddings-and-output-weights", "disable-bias-linear",
      "qk-layernorm",
      "group-query-attention", "sequence-parallel", "use-distributed-optimizer", "tp-comm-overlap",
      "recompute-activations", "moe-grouped-gemm", "multi-latent-attention", "use-flash-attn", "moe-permute-fusion",
      "overlap-grad-reduce", "overlap-param-gather", "use-mcore-models", "no-masked-softmax-fusion",
      "attention-softmax-in-fp32", "accumulate-allreduce-grads-in-fp32", "no-load-optim", "no-load-rng",
      "log-throughput", "log-timers-to-tensorboard", "mock-data", "use-rotary-position-embeddings",
      "no-position-embedding", "moe-router-enable-expert-bias", "moe-router-pre-softmax", "manual-gc",
      "use-torch-fsdp2", "ddp-average-in-collective", "bias-swiglu-fusion", "cross-entropy-loss-fusion",
      "apply-rope-fusion", "account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split",
      "moe-router-force-load-balancing", "no-overlap-p2p-communication", "overlap-p2p-communication",
      "use-tp-pp-dp-mapping", "moe-enable-deepep", "no-rope-fusion", "enable-cuda-graph", "external-cuda-graph",
      "use-precision-aware-optimizer", "fp8-param-gather", "use-megatron-fsdp"};
  // clang-format on
  return s.count(flag) > 0;
}

bool parse_window_size(const std::string& text, int& left, int& right)
{
  std::string digits;
  for (char c : text)
    if (c != '(' && c != ')' && c != '[' && c != ']' && c != ' ')
      digits += c;
  char comma = 0, extra = 0;
  return std::sscanf(digits.c_str(), "%d%c%d%c", &left, &comma, &right, &extra) == 3 && comma == ',';
}

std::string megatron_dispatcher(const std::string& type, const std::string& backend)
{
  if (type.empty())
    return "allgather";
  return type != "flex" ? type : backend.empty() ? "deepep" : backend;
}

const char* argument_of_field(const std::string& field)
{
  // Megatron-Core's overlap_p2p_comm is --overlap-p2p-communication on the command line.
  return field == "overlap-p2p-comm" ? "overlap-p2p-communication" : nullptr;
}

std::string switch_turned_off(const std::string& field)
{
  if (field == "apply-rope-fusion") // Megatron-LM spells it --no-rope-fusion
    return "no-rope-fusion";
  return switch_flags().count("no-" + field) ? "no-" + field : "";
}

bool launcher_flag(const std::string& flag)
{
  static const std::set<std::string> s{"nproc_per_node", "nproc-per-node", "nnodes",        "node_rank",
                                       "node-rank",      "master_addr",    "master-addr",   "master_port",
                                       "master-port",    "rdzv_endpoint",  "rdzv-endpoint", "rdzv_backend",
                                       "rdzv-backend"};
  return s.count(flag) > 0;
}

const std::set<std::string>& no_step_effect_flags()
{
  // clang-format off
  static const std::set<std::string> flags{
      "lr", "min-lr", "lr-decay-style", "lr-decay-iters", "lr-decay-samples", "lr-warmup-iters", "lr-warmup-samples",
      "lr-warmup-fraction", "lr-warmup-init", "weight-decay", "clip-grad", "adam-beta1", "adam-beta2", "adam-eps",
      "init-method-std", "seed", "train-iters", "train-samples", "eval-iters", "eval-interval", "save", "load",
      "save-interval", "log-interval", "data-path", "split", "tokenizer-type", "tokenizer-model", "vocab-file",
      "merge-file", "tensorboard-dir", "wandb-project", "wandb-exp-name", "distributed-backend",
      "rotary-base", "rotary-percent", "rotary-scaling-factor", "max-position-embeddings",
      "make-vocab-size-divisible-by", "norm-epsilon", "use-mcore-models", "no-masked-softmax-fusion",
      "attention-softmax-in-fp32", "accumulate-allreduce-grads-in-fp32", "exit-duration-in-mins", "no-load-optim",
      "no-load-rng", "log-throughput", "log-timers-to-tensorboard", "timing-log-level", "data-cache-path",
      "mock-data", "ckpt-format", "num-workers", "no-position-embedding", "moe-aux-loss-coeff",
      "moe-router-load-balancing-type",
      "moe-z-loss-coeff", "moe-router-score-function",
      "moe-router-enable-expert-bias", "moe-router-bias-update-rate", "moe-router-pre-softmax",
      "moe-router-topk-scaling-factor", "moe-router-dtype", "mtp-loss-scaling-factor", "fp8-amax-history-len",
      "fp8-amax-compute-algo", "fp8-margin", "fp8-format", "transformer-impl", "overlap-grad-reduce",
      "overlap-param-gather", "ddp-average-in-collective", "manual-gc",
      "distributed-timeout-minutes", "bias-swiglu-fusion", "moe-permute-fusion"};
  // clang-format on
  return flags;
}

const std::map<std::string, const char*>& size_flags()
{
  static const std::map<std::string, const char*> ints{
      {"num-layers", "workload.model.layers"},
      {"hidden-size", "workload.model.hidden"},
      {"ffn-hidden-size", "workload.model.ffn"},
      {"num-attention-heads", "workload.model.heads"},
      {"kv-channels", "workload.model.head_dim"},
      {"num-query-groups", "workload.model.kv_heads"},
      {"seq-length", "workload.model.seq"},
      {"padded-vocab-size", "workload.model.vocab"},
      {"vocab-size", "workload.model.vocab"},
      {"micro-batch-size", "workload.batch.micro"},
      {"global-batch-size", "workload.batch.global"},
      {"tensor-model-parallel-size", "workload.parallel.tp"},
      {"pipeline-model-parallel-size", "workload.parallel.pp"},
      {"virtual-pipeline-model-parallel-size", "workload.parallel.vpp"},
      {"context-parallel-size", "workload.parallel.cp"},
      {"num-distributed-optimizer-instances", "workload.parallel.dp_replicate"},
      {"expert-model-parallel-size", "workload.parallel.ep"},
      {"expert-tensor-parallel-size", "workload.parallel.etp"},
      {"num-experts", "workload.model.moe.experts"},
      {"moe-router-topk", "workload.model.moe.top_k"},
      {"moe-ffn-hidden-size", "workload.model.moe.expert_ffn"},
      {"moe-shared-expert-intermediate-size", "workload.model.moe.shared_ffn"},
      {"mtp-num-layers", "workload.model.mtp_depth"},
      {"recompute-num-layers", "workload.model.recompute_num_layers"},
      {"q-lora-rank", "workload.model.mla.q_lora_rank"},
      {"kv-lora-rank", "workload.model.mla.kv_lora_rank"},
      {"qk-head-dim", "workload.model.mla.qk_nope_head_dim"},
      {"qk-pos-emb-head-dim", "workload.model.mla.qk_rope_head_dim"},
      {"v-head-dim", "workload.model.mla.v_head_dim"},
      // Group-limited routing with the EP group's nodes as the groups (DeepSeek-V3: 8 groups, 4 per token).
      {"moe-router-group-topk", "workload.model.moe.max_nodes_per_token"},
      {"moe-deepep-num-sms", "workload.model.moe.deepep_sms"},
      {"moe-hybridep-num-sms", "workload.model.moe.hybridep_sms"}};
  return ints;
}

const std::map<std::string, std::pair<const char*, YAML::Node>>& switch_flags()
{
  static const std::map<std::string, std::pair<const char*, YAML::Node>> switches{
      {"bf16", {"workload.model.dtype", YAML::Node("bf16")}},
      {"fp16", {"workload.model.dtype", YAML::Node("fp16")}},
      {"swiglu", {"workload.model.mlp", YAML::Node("swiglu")}},
      {"squared-relu", {"workload.model.mlp", YAML::Node("squared-relu")}},
      {"untie-embeddings-and-output-weights", {"workload.model.tie_embeddings", YAML::Node(false)}},
      {"disable-bias-linear", {"workload.model.bias", YAML::Node(false)}},
      {"qk-layernorm", {"workload.model.qk_norm", YAML::Node(true)}},
      {"sequence-parallel", {"workload.parallel.sequence_parallel", YAML::Node(true)}},
      {"use-distributed-optimizer", {"workload.parallel.zero", YAML::Node(1)}},
      {"tp-comm-overlap", {"workload.framework.tp_comm_overlap", YAML::Node(true)}},
      {"moe-grouped-gemm", {"workload.framework.moe_grouped_gemm", YAML::Node(true)}},
      {"overlap-moe-expert-parallel-comm", {"workload.framework.overlap_moe_expert_parallel_comm", YAML::Node(true)}},
      {"moe-shared-expert-overlap", {"workload.framework.moe_shared_expert_overlap", YAML::Node(true)}},
      {"delay-wgrad-compute", {"workload.framework.delay_wgrad_compute", YAML::Node(true)}},
      {"use-precision-aware-optimizer", {"workload.framework.use_precision_aware_optimizer", YAML::Node(true)}},
      {"fp8-param-gather", {"workload.framework.fp8_param_gather", YAML::Node(true)}},
      {"accumulate-allreduce-grads-in-fp32", {"workload.framework.grad_reduce_in_fp32", YAML::Node(true)}},
      {"no-gradient-accumulation-fusion", {"workload.framework.gradient_accumulation_fusion", YAML::Node(false)}},
      {"no-async-tensor-model-parallel-allreduce",
       {"workload.framework.async_tensor_model_parallel_allreduce", YAML::Node(false)}},
      // Megatron-LM overlaps interleaved schedules' pipeline sends by default; older versions spelt the switch on.
      {"no-overlap-p2p-communication", {"workload.framework.overlap_p2p_comm", YAML::Node(false)}},
      {"overlap-p2p-communication", {"workload.framework.overlap_p2p_comm", YAML::Node(true)}},
      // Megatron-Core's benchmarking switch: random router logits that spread tokens evenly (what Megatron-Bridge's
      // MoE performance rows run with).
      {"moe-router-force-load-balancing", {"policies.moe_routing", YAML::Node("balanced")}},
      {"recompute-activations", {"workload.model.recompute", YAML::Node("selective")}}, // its old spelling
      {"use-flash-attn", {"workload.model.attention", YAML::Node("flash")}},
      // Rotary embedding: --position-embedding-type rope, or its old switch; fused unless --no-rope-fusion.
      {"use-rotary-position-embeddings", {"workload.model.position_embedding", YAML::Node("rope")}},
      {"apply-rope-fusion", {"workload.framework.fused_rope", YAML::Node(true)}},
      {"no-rope-fusion", {"workload.framework.fused_rope", YAML::Node(false)}},
      {"account-for-embedding-in-pipeline-split", {"workload.parallel.account_for_embedding", YAML::Node(true)}},
      {"account-for-loss-in-pipeline-split", {"workload.parallel.account_for_loss", YAML::Node(true)}},
      // Megatron-LM's other rank order: a replica's pipeline stages next to its tensor-parallel ranks.
      {"use-tp-pp-dp-mapping", {"workload.parallel.placement", YAML::Node("tp-pp-dp")}}};
  return switches;
}

namespace {

// fp32, and of bf16, fp16 and fp8 those asked for, each also as torch's dtype (fp8 moments are torch.uint8).
std::map<std::string, std::string> optimizer_dtypes(bool bf16, bool fp16, bool fp8)
{
  std::map<std::string, std::string> out{{"fp32", "fp32"}, {"torch.float32", "fp32"}};
  if (bf16)
    out.insert({{"bf16", "bf16"}, {"torch.bfloat16", "bf16"}});
  if (fp16)
    out.insert({{"fp16", "fp16"}, {"torch.float16", "fp16"}});
  if (fp8)
    out.insert({{"fp8", "fp8"}, {"torch.uint8", "fp8"}});
  return out;
}

} // namespace

const std::map<std::string, std::pair<const char*, std::map<std::string, std::string>>>& choice_flags()
{
  static const std::map<std::string, std::pair<const char*, std::map<std::string, std::string>>> c{
      {"normalization", {"workload.model.norm", {{"RMSNorm", "rmsnorm"}, {"LayerNorm", "layernorm"}}}},
      {"position-embedding-type",
       {"workload.model.position_embedding",
        {{"learned_absolute", "learned"}, {"rope", "rope"}, {"yarn", "rope"}, {"mrope", "rope"}, {"none", "none"}}}},
      {"fp8-recipe",
       {"workload.model.fp8",
        {{"tensorwise", "tensorwise"}, {"delayed", "delayed"}, {"blockwise", "blockwise"}, {"mxfp8", "mxfp8"}}}},
      {"recompute-granularity", {"workload.model.recompute", {{"full", "full"}, {"selective", "selective"}}}},
      // The precision-aware optimizer's dtypes, as Megatron-LM spells them and as Megatron-Bridge's overrides do.
      {"main-params-dtype", {"workload.framework.main_params_dtype", optimizer_dtypes(false, true, false)}},
      {"main-grads-dtype", {"workload.framework.main_grads_dtype", optimizer_dtypes(true, false, false)}},
      {"exp-avg-dtype", {"workload.framework.exp_avg_dtype", optimizer_dtypes(true, true, true)}},
      {"exp-avg-sq-dtype", {"workload.framework.exp_avg_sq_dtype", optimizer_dtypes(true, true, true)}},
      {"recompute-method", {"workload.model.recompute_method", {{"uniform", "uniform"}, {"block", "block"}}}},
      {"cp-comm-type", {"workload.parallel.cp_comm", {{"p2p", "p2p"}, {"a2a", "a2a"}, {"all_gather", "allgather"}}}},
      // auto: Transformer Engine picks cuDNN's fused attention on Hopper [recon].
      {"attention-backend",
       {"workload.model.attention",
        {{"fused", "cudnn"},
         {"auto", "cudnn"},
         {"flash", "flash"},
         {"unfused", "materialized"},
         {"local", "materialized"}}}}};
  return c;
}

} // namespace cs
