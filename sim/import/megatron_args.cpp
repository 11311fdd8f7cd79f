// Megatron-LM's arguments (megatron/training/arguments.py) as its documentation and pretrain_gpt.py spell them; the
// ones that shape a step are mapped to scenario keys, the ones that do not (learning rate, data, checkpoint paths,
// logging) are named in one warning, and unknown ones in another.
#include "sim/import/megatron_args.hpp"
#include "sim/import/megatron_arg_reader.hpp"

#include "sim/import/megatron_flags.hpp"
#include "sim/import/shell_words.hpp"

#include "base/input_error.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <map>

namespace cs {
namespace megatron_import {

void ArgReader::read(const std::vector<Token>& tokens)
{
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    std::string name;
    std::vector<Token> values;
    if (t.text.rfind("--", 0) == 0) {
      name = t.text.substr(2);
      if (const auto eq = name.find('='); eq != std::string::npos) { // --flag=value
        Token v{name.substr(eq + 1), t.line, t.column + int(eq) + 3};
        name = name.substr(0, eq);
        values.push_back(v);
      } else if (!megatron_switch(name)) { // its values: the words up to the next flag
        while (i + 1 < tokens.size() && tokens[i + 1].text.rfind("--", 0) != 0 &&
               tokens[i + 1].text.find('=') == std::string::npos) {
          values.push_back(tokens[++i]);
          if (name != "recompute-modules" && name != "cuda-graph-modules" && name != "cuda-graph-scope")
            break;
        }
      }
    } else if (const auto eq = t.text.find('='); eq != std::string::npos && t.text.find('.') < eq) {
      // A Megatron-Bridge override (model.tensor_model_parallel_size=4): its last part is the argument's name.
      std::string key = t.text.substr(0, eq);
      key = key.substr(key.rfind('.') + 1);
      std::replace(key.begin(), key.end(), '_', '-');
      const char* argument = argument_of_field(key);
      name = argument ? argument : key;
      values.push_back(Token{t.text.substr(eq + 1), t.line, t.column + int(eq) + 1});
      const std::string& v = values.back().text;
      if (v == "true" || v == "True") {
        values.clear(); // a switch turned on
      } else if ((v == "false" || v == "False") && !switch_turned_off(name).empty()) {
        name = switch_turned_off(name); // a field on by default, turned off
        values.clear();
      } else if (v == "false" || v == "False" || v == "null" || v == "None") {
        ignored_.push_back(t.text); // a switch left off, or unset
        continue;
      }
    } else {
      continue; // the launcher and script names (torchrun, pretrain_gpt.py)
    }
    Token flag{name, t.line, t.column};
    if (launcher_flag(name)) {
      if (values.empty())
        fail(t, "--" + name + " needs a value");
      if (name == "nnodes")
        nodes_ = positive_int(flag, values[0]);
      if (name == "nproc_per_node" || name == "nproc-per-node")
        per_node_ = positive_int(flag, values[0]);
      continue;
    }
    if (!seen_.count(name))
      seen_[name] = values.empty() ? Token{"", t.line, t.column} : values[0];
    apply(flag, values);
  }
  finish();
}

void ArgReader::apply(const Token& flag, const std::vector<Token>& values)
{
  const std::string& f = flag.text;
  auto value = [&]() -> const Token& {
    if (values.empty())
      fail(flag, "--" + f + " needs a value");
    return values[0];
  };
  if (f == "tp-comm-overlap-cfg")
    return apply_tp_overlap_cfg(value());
  if (f == "cuda-graph-impl" || f == "cuda-graph-modules" || f == "cuda-graph-scope" || f == "enable-cuda-graph" ||
      f == "external-cuda-graph") {
    std::string shown = "--" + f;
    for (const auto& v : values)
      shown += " " + v.text;
    ignored_.push_back(shown + " (CUDA graphs cut the host's kernel launches, whose cost is not modelled)");
    return;
  }
  if (f == "window-size" || f == "window-attn-skip-freq" || f == "softmax-type")
    return apply_window(flag, value());
  if (f == "cross-entropy-loss-fusion") {
    cross_entropy_fusion_ = true;
    return;
  }
  if (f == "cross-entropy-fusion-impl") {
    if (value().text != "native" && value().text != "te")
      fail(value(), "--cross-entropy-fusion-impl is one of native, te, not '" + value().text + "'");
    cross_entropy_impl_ = value().text;
    return;
  }
  // Megatron-LM turns apply_rope_fusion off for every position embedding but plain rope (arguments.py), and
  // Megatron-Bridge's providers that pick yarn (GPT-OSS) leave it at TransformerConfig's off.
  if (f == "position-embedding-type" && (value().text == "yarn" || value().text == "mrope"))
    rope_unfused_ = true;
  if (f == "use-torch-fsdp2" || f == "use-megatron-fsdp" || f == "data-parallel-sharding-strategy" ||
      f == "outer-dp-sharding-strategy")
    return; // resolved together in finish() (resolve_sharding)
  if (f == "moe-token-dispatcher-type" || f == "moe-flex-dispatcher-backend" || f == "moe-enable-deepep" ||
      f == "moe-flex-dispatcher-num-sms")
    return apply_dispatcher(flag, values);
  if (auto it = size_flags().find(f); it != size_flags().end()) {
    if (f == "moe-shared-expert-intermediate-size") // Megatron's shared experts are one MLP of this size
      run_.set("workload.model.moe.shared_experts", 1);
    return run_.set(it->second, positive_int(flag, value()));
  }
  if (auto it = switch_flags().find(f); it != switch_flags().end())
    return run_.set(it->second.first, YAML::Clone(it->second.second));
  if (auto it = choice_flags().find(f); it != choice_flags().end()) {
    const auto& [key, spelt] = it->second;
    const auto c = spelt.find(value().text);
    if (c == spelt.end()) {
      std::string valid;
      for (const auto& kv : spelt)
        valid += (valid.empty() ? "" : ", ") + kv.first;
      fail(value(), fmt::format("--{} is one of {}, not '{}'", f, valid, value().text));
    }
    return run_.set(key, c->second);
  }
  if (f == "hidden-dropout")
    return run_.set("workload.framework.dropout", fraction(flag, value()));
  if (f == "recompute-modules") {
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& v : values)
      list.push_back(v.text);
    return run_.set("workload.model.recompute_modules", list);
  }
  if (f == "moe-layer-freq" || f == "moe-expert-capacity-factor")
    return apply_moe(flag, value());
  if (f == "decoder-first-pipeline-num-layers" || f == "decoder-last-pipeline-num-layers")
    return run_.set(std::string("import.") + (f[8] == 'f' ? "first" : "last"), positive_int(flag, value()));
  if (f == "pipeline-model-parallel-layout")
    return run_.set("workload.parallel.pipeline_layout", value().text);
  if (f == "num-layers-per-virtual-pipeline-stage")
    return run_.set("import.layers_per_virtual_stage", positive_int(flag, value()));
  if (f == "multi-latent-attention" || f == "group-query-attention" || f == "attention-dropout")
    return; // read in finish() (MLA's and GQA's flags count only with these), one dropout: hidden-dropout's
  const std::string shown = "--" + f + (values.empty() ? "" : " " + values[0].text);
  (no_step_effect_flags().count(f) ? ignored_ : unknown_).push_back(shown);
}

void ArgReader::finish()
{
  if (nodes_ > 0 && per_node_ > 0)
    run_.gpus = nodes_ * per_node_;
  run_.gpus_per_node = per_node_;
  if (run_.has("import.layers_per_virtual_stage")) { // vpp = layers / (pp x layers per virtual stage)
    const int per = run_.get("import.layers_per_virtual_stage").as<int>();
    const int layers = run_.has("workload.model.layers") ? run_.get("workload.model.layers").as<int>() : 0;
    const int pp = run_.has("workload.parallel.pp") ? run_.get("workload.parallel.pp").as<int>() : 1;
    const Token& t = seen_.at("num-layers-per-virtual-pipeline-stage");
    if (layers == 0 || layers % (pp * per) != 0)
      fail(t, fmt::format("--num-layers-per-virtual-pipeline-stage {} does not divide {} layers over {} stages", per,
                          layers, pp));
    run_.set("workload.parallel.vpp", layers / (pp * per));
    run_.root.remove("import");
  }
  // MLA's flags count only with --multi-latent-attention; Megatron's --q-lora-rank default (None) compresses no query.
  if (seen_.count("multi-latent-attention")) {
    if (!run_.has("workload.model.mla.q_lora_rank"))
      run_.set("workload.model.mla.q_lora_rank", 0);
  } else if (run_.has("workload.model.mla")) {
    run_.root["workload"]["model"].remove("mla");
  }
  uneven_stages();
  layout_stages();
  if (seen_.count("num-query-groups") && !seen_.count("group-query-attention"))
    run_.root["workload"]["model"].remove("kv_heads"); // Megatron reads the groups only with the switch
  resolve_dispatcher();
  resolve_sharding();
  resolve_window();
  if (cross_entropy_fusion_)
    run_.set("workload.framework.cross_entropy_fusion", cross_entropy_impl_.empty() ? "native" : cross_entropy_impl_);
  else if (!cross_entropy_impl_.empty())
    ignored_.push_back("--cross-entropy-fusion-impl " + cross_entropy_impl_ +
                       " (read only with --cross-entropy-loss-fusion)");
  if (rope_unfused_)
    run_.set("workload.framework.fused_rope", false);
  const bool moe = run_.has("workload.model.moe.experts");
  if (moe && !run_.has("workload.framework.moe_grouped_gemm")) // Megatron's default: one GEMM per expert
    run_.set("workload.framework.moe_grouped_gemm", false);
  run_.set("workload.framework.name", "megatron-core");
  if (!run_.has("workload.framework.dropout"))
    run_.set("workload.framework.dropout", 0.1); // Megatron's default hidden_dropout
  if (!run_.has("workload.model.dtype"))
    run_.set("workload.model.dtype", "fp32"); // neither --bf16 nor --fp16
  for (const char* key : {"workload.model.mlp", "workload.model.norm"})
    if (!run_.has(key)) // Megatron's defaults: GeLU, LayerNorm
      run_.set(key, std::string(key).find("mlp") != std::string::npos ? "gelu" : "layernorm");
  // Megatron-Core's rank order (tp-cp-ep-dp-pp): the pipeline outermost, unless --use-tp-pp-dp-mapping said otherwise.
  if (!run_.has("workload.parallel.placement"))
    run_.set("workload.parallel.placement", "tp-dp-pp");
  const bool interleaved = run_.has("workload.parallel.vpp") && run_.get("workload.parallel.vpp").as<int>() > 1;
  run_.set("policies.pipeline", interleaved ? "interleaved-1f1b" : "1f1b");
  if (!run_.has("workload.model.vocab"))
    run_.warn("no --padded-vocab-size or --vocab-size: the vocabulary comes from the tokenizer, which is not read; the "
              "scenario keeps 51,200");
  if (!ignored_.empty()) {
    std::string list;
    for (const auto& s : ignored_)
      list += (list.empty() ? "" : ", ") + s;
    run_.warn("read but not modelled (no effect on the simulated step, or approximated as said): " + list);
  }
  if (!unknown_.empty()) {
    std::string list;
    for (const auto& s : unknown_)
      list += (list.empty() ? "" : ", ") + s;
    run_.warn("not known to the importer, so not modelled: " + list);
  }
}

} // namespace megatron_import

ImportedRun read_megatron_args(const std::string& text, const std::string& source)
{
  ImportedRun run;
  run.set("workload.kind", "transformer-training");
  megatron_import::ArgReader reader(source, run);
  reader.read(shell_words(text, source));
  return run;
}

} // namespace cs
