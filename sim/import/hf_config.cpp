// Hugging Face transformers' configuration classes (LlamaConfig, MistralConfig, Qwen2Config, Qwen3Config,
// MixtralConfig, Qwen2MoeConfig, Qwen3MoeConfig, DeepseekV2Config, DeepseekV3Config, GptOssConfig, NemotronConfig) as
// their config.json spells them.
// A model configuration carries no run: the parallelism, the batch and the framework are defaults, said so.
#include "sim/import/hf_config.hpp"

#include "base/json_input.hpp"

#include <fmt/format.h>
#include <set>

namespace cs {
namespace {

const std::set<std::string>& families()
{
  static const std::set<std::string> f{"llama",     "mistral",     "qwen2",       "qwen3",   "mixtral", "qwen2_moe",
                                       "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss", "nemotron"};
  return f;
}

// Keys that change nothing a step costs: token ids, initialisation, inference caches, rotary frequencies (the
// rotation costs the same whatever its base), norm epsilons, the router's loss weights and scoring.
const std::set<std::string>& no_step_effect()
{
  // clang-format off
  static const std::set<std::string> k{
      "architectures", "bos_token_id", "eos_token_id", "pad_token_id", "initializer_range", "rms_norm_eps",
      "rope_theta", "rope_scaling", "transformers_version", "use_cache", "_name_or_path", "auto_map", "norm_eps",
      "pretraining_tp", "router_aux_loss_coef", "output_router_logits", "norm_topk_prob", "scoring_func",
      "routed_scaling_factor", "topk_method", "aux_loss_alpha", "seq_aux", "ep_size", "router_jitter_noise",
      "rope_interleave", "layer_types", "max_window_layers", "use_sliding_window", "mlp_bias", "attention_bias",
      "attention_dropout", "hidden_dropout", "model_type", "max_position_embeddings", "use_qk_norm",
      "tie_word_embeddings", "torch_dtype", "dtype", "hidden_act", "num_experts_per_tok", "n_group", "topk_group",
      "first_k_dense_replace", "moe_layer_freq", "experts_per_token", "initial_context_length", "swiglu_limit"};
  // clang-format on
  return k;
}

class HfReader {
public:
  HfReader(const nlohmann::json& doc, const std::string& text, const std::string& source, ImportedRun& run)
      : doc_(doc), r_(doc, source, "", &text), run_(run)
  {}

  void read()
  {
    if (!doc_.is_object())
      r_.fail("a Hugging Face config.json is one JSON object");
    type_ = r_.string("model_type");
    used_.insert("model_type");
    if (!families().count(type_)) {
      std::string known;
      for (const auto& f : families())
        known += (known.empty() ? "" : ", ") + f;
      r_.item(doc_.at("model_type"), "model_type")
          .fail(fmt::format("'{}' is not a model_type the importer reads ({})", type_, known));
    }
    shape();
    precision();
    if (type_.find("deepseek") == 0)
      latent_attention();
    experts();
    window();
    report();
  }

private:
  bool given(const char* key) const { return doc_.contains(key) && !doc_.at(key).is_null(); }
  int whole(const char* key, int min = 1)
  {
    used_.insert(key);
    return r_.integer(key, min, 1 << 30);
  }
  // Sets `scenario_key` from `key` when the configuration gives it.
  void maybe(const char* key, const std::string& scenario_key, int min = 1)
  {
    if (given(key))
      run_.set(scenario_key, whole(key, min));
    used_.insert(key);
  }
  bool flag(const char* key, bool otherwise)
  {
    used_.insert(key);
    if (!given(key))
      return otherwise;
    if (!doc_.at(key).is_boolean())
      r_.item(doc_.at(key), key).fail("expected true or false");
    return doc_.at(key).get<bool>();
  }

  void shape()
  {
    run_.set("workload.kind", "transformer-training");
    run_.set("workload.model.layers", whole("num_hidden_layers"));
    run_.set("workload.model.hidden", whole("hidden_size"));
    run_.set("workload.model.ffn", whole("intermediate_size"));
    run_.set("workload.model.heads", whole("num_attention_heads"));
    maybe("num_key_value_heads", "workload.model.kv_heads");
    maybe("head_dim", "workload.model.head_dim");
    if (!given("head_dim")) // NemotronConfig's earlier name for it (Megatron's kv_channels)
      maybe("kv_channels", "workload.model.head_dim");
    run_.set("workload.model.vocab", whole("vocab_size"));
    // Every family here is Llama's block: SwiGLU, RMSNorm, rotary positions, no biases but Qwen2's on QKV; but
    // Nemotron (Nemotron-4, Minitron), whose MLP is squared ReLU without a gate and whose norms are LayerNorms
    // (layernorm1p: LayerNorm with a zero-centred scale).
    const bool nemotron = type_ == "nemotron";
    run_.set("workload.model.mlp", nemotron ? "squared-relu" : "swiglu");
    run_.set("workload.model.norm", nemotron ? "layernorm" : "rmsnorm");
    run_.set("workload.model.position_embedding", "rope");
    run_.set("workload.model.bias", false);
    run_.set("workload.model.tie_embeddings", flag("tie_word_embeddings", false));
    if (type_ == "qwen3" || type_ == "qwen3_moe")
      run_.set("workload.model.qk_norm", true);
    used_.insert("hidden_act");
    const char* act = nemotron ? "relu2" : "silu";
    if (given("hidden_act") && r_.string("hidden_act") != act)
      approximated_.push_back("hidden_act " + r_.string("hidden_act") + " (priced as " +
                              (nemotron ? "squared ReLU)" : "SwiGLU's SiLU)"));
    // Nemotron rotates part of each head (partial_rotary_factor 0.5); the rotation is priced over whole heads.
    used_.insert("partial_rotary_factor");
    if (given("partial_rotary_factor") && doc_.at("partial_rotary_factor").is_number() &&
        doc_.at("partial_rotary_factor").get<double>() < 1.0)
      approximated_.push_back("partial_rotary_factor (the rotation priced over whole heads)");
    // GPT-OSS has biases on every linear layer (its attention's and its experts'); Qwen2's are on QKV only.
    if (type_ == "gpt_oss" && flag("attention_bias", true))
      run_.set("workload.model.bias", true);
    else if (type_ == "qwen2" || type_ == "qwen2_moe" || flag("attention_bias", false))
      approximated_.push_back("the attention's QKV biases (left out: a bias add per projection)");
    // Megatron-LM fuses the rotation only for plain rope (arguments.py); YaRN (GPT-OSS, DeepSeek) runs unfused.
    used_.insert("rope_scaling");
    if (given("rope_scaling") && doc_.at("rope_scaling").is_object()) {
      const auto& s = doc_.at("rope_scaling");
      const auto kind = s.contains("rope_type") ? s.at("rope_type")
                        : s.contains("type")    ? s.at("type")
                                                : nlohmann::json();
      if (kind == "yarn")
        run_.set("workload.framework.fused_rope", false);
    }
    // The sequence is the run's, not the model's: a 4,096-token one, or the model's whole context when shorter.
    const int context = given("max_position_embeddings") ? whole("max_position_embeddings") : 4096;
    seq_ = std::min(4096, context);
    run_.set("workload.model.seq", seq_);
    run_.warn(
        fmt::format("the sequence length is the run's, not the model's: {} tokens assumed (workload.model.seq)", seq_));
  }

  void precision()
  {
    const char* key = given("torch_dtype") ? "torch_dtype" : "dtype";
    used_.insert(key);
    const std::string dtype = given(key) ? r_.string(key) : "bfloat16";
    if (dtype == "float16") {
      run_.set("workload.model.dtype", "fp16");
    } else {
      run_.set("workload.model.dtype", "bf16"); // trained in bf16 whatever the checkpoint is stored in
      if (dtype != "bfloat16")
        approximated_.push_back(std::string(key) + " " + dtype + " (trained in bf16)");
    }
    if (given("quantization_config"))
      approximated_.push_back("quantization_config (how the checkpoint is stored, not a training recipe: set "
                              "workload.model.fp8 to train in FP8)");
    used_.insert("quantization_config");
  }

  void latent_attention()
  {
    run_.set("workload.model.mla.q_lora_rank", given("q_lora_rank") ? whole("q_lora_rank") : 0);
    used_.insert("q_lora_rank");
    run_.set("workload.model.mla.kv_lora_rank", whole("kv_lora_rank"));
    run_.set("workload.model.mla.qk_nope_head_dim", whole("qk_nope_head_dim"));
    run_.set("workload.model.mla.qk_rope_head_dim", whole("qk_rope_head_dim"));
    run_.set("workload.model.mla.v_head_dim", whole("v_head_dim"));
    if (given("num_nextn_predict_layers") && whole("num_nextn_predict_layers", 0) > 0)
      run_.set("workload.model.mtp_depth", whole("num_nextn_predict_layers", 0));
    used_.insert("num_nextn_predict_layers");
  }

  void experts()
  {
    const bool local = type_ == "mixtral" || type_ == "gpt_oss"; // experts of the model's own intermediate size
    const char* count = local ? "num_local_experts" : type_.find("qwen") == 0 ? "num_experts" : "n_routed_experts";
    if (local || type_.find("_moe") != std::string::npos || type_.find("deepseek") == 0) {
      run_.set("workload.model.moe.experts", whole(count));
      run_.set("workload.model.moe.top_k", whole("num_experts_per_tok"));
      run_.set("workload.model.moe.expert_ffn", local ? whole("intermediate_size") : whole("moe_intermediate_size"));
      if (type_.find("deepseek") == 0) {
        if (given("n_shared_experts") && whole("n_shared_experts", 0) > 0) {
          run_.set("workload.model.moe.shared_experts", whole("n_shared_experts", 0));
          run_.set("workload.model.moe.shared_ffn", whole("moe_intermediate_size"));
        }
        used_.insert("n_shared_experts");
        maybe("first_k_dense_replace", "workload.model.moe.first_dense", 0);
        maybe("moe_layer_freq", "workload.model.moe.every");
        if (given("topk_group"))
          run_.warn("group-limited routing (n_group, topk_group) is read once expert parallelism spans nodes: set "
                    "workload.model.moe.max_nodes_per_token");
      }
      if (type_ == "qwen2_moe" && given("shared_expert_intermediate_size")) {
        run_.set("workload.model.moe.shared_experts", 1);
        run_.set("workload.model.moe.shared_ffn", whole("shared_expert_intermediate_size"));
      }
      used_.insert("shared_expert_intermediate_size");
      maybe("decoder_sparse_step", "workload.model.moe.every");
      used_.insert("mlp_only_layers");
      if (given("mlp_only_layers") && !doc_.at("mlp_only_layers").empty())
        approximated_.push_back("mlp_only_layers (every layer priced with experts)");
      run_.warn("expert parallelism is not in a model configuration: ep 1, every GPU holding every expert (set "
                "workload.parallel.ep)");
    }
    used_.insert(count);
  }

  void window()
  {
    // Mistral's window covers every layer; Qwen's applies only with use_sliding_window, and then per layer; GPT-OSS's
    // on the layers layer_types names sliding_attention, every other one, with a learned sink a head.
    used_.insert("sliding_window");
    if (!given("sliding_window"))
      return;
    const int w = whole("sliding_window");
    if (type_ == "gpt_oss") {
      used_.insert("layer_types");
      int full = 0, layers = 0;
      if (given("layer_types") && doc_.at("layer_types").is_array())
        for (const auto& t : doc_.at("layer_types")) {
          ++layers;
          full += t == "full_attention" ? 1 : 0;
        }
      if (full > 0 && layers != 2 * full)
        approximated_.push_back(
            fmt::format("layer_types ({} full-attention layers of {}, priced as every second)", full, layers));
      run_.set("workload.model.sliding_window.window", w);
      run_.set("workload.model.sliding_window.full_every", full > 0 ? 2 : 0);
      run_.set("workload.model.sliding_window.sinks", true);
      return;
    }
    if (type_ == "mistral" && w < seq_)
      run_.set("workload.model.sliding_window.window", w);
    else if (type_ != "mistral" && flag("use_sliding_window", false))
      approximated_.push_back("use_sliding_window (every layer priced with full attention)");
  }

  void report()
  {
    std::string ignored, unknown;
    for (const auto& kv : doc_.items()) {
      if (used_.count(kv.key()))
        continue;
      std::string& list = no_step_effect().count(kv.key()) ? ignored : unknown;
      list += (list.empty() ? "" : ", ") + kv.key();
    }
    std::string approx;
    for (const auto& a : approximated_)
      approx += (approx.empty() ? "" : "; ") + a;
    if (!approx.empty())
      run_.warn("approximated: " + approx);
    if (!ignored.empty())
      run_.warn("read but not modelled (no effect on the simulated step): " + ignored);
    if (!unknown.empty())
      run_.warn("not known to the importer, so not modelled: " + unknown);
    run_.set("workload.batch.micro", 1);
    run_.set("workload.model.recompute", "none");
    run_.warn("a model configuration carries no run: data parallelism over every GPU, micro-batch 1, no "
              "recomputation, Megatron-Core's kernels (edit workload.parallel, workload.batch and workload.framework)");
  }

  const nlohmann::json& doc_;
  JsonReader r_;
  ImportedRun& run_;
  std::string type_;
  int seq_ = 4096;
  std::set<std::string> used_;
  std::vector<std::string> approximated_;
};

} // namespace

ImportedRun read_hf_config(const std::string& text, const std::string& source)
{
  const nlohmann::json doc = parse_json_input(text, source);
  ImportedRun run;
  HfReader(doc, text, source, run).read();
  return run;
}

bool looks_like_hf_config(const std::string& text)
{
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  return doc.is_object() && doc.contains("model_type");
}

} // namespace cs
