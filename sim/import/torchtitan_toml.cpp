// torchtitan's JobConfig (torchtitan/config/job_config.py) as its train_configs spell it. FSDP2 with its
// mixed-precision policy is the `fsdp` framework profile with ZeRO-3 over the data-parallel shards; model flavors map
// to presets.
#include "sim/import/torchtitan_toml.hpp"

#include "base/input_error.hpp"
#include "models/transformer/model_params.hpp"
#include "sim/import/torchtitan_reader.hpp"
#include "sim/import/torchtitan_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <toml++/toml.h>

namespace cs {

void TorchtitanReader::model()
{
  const auto name = text("model", "name");
  const auto flavor = text("model", "flavor");
  if (!name || !flavor)
    throw InputError(source_, 1, 1, "[model] needs name and flavor (torchtitan's model and its size)");
  std::string known;
  const TorchtitanFlavor* preset = torchtitan_flavor(*name, *flavor, known);
  if (!preset)
    fail(*at("model", "flavor"), fmt::format("no preset for torchtitan's {} {} (known: {})", *name, *flavor, known));
  run_.set("workload.model.preset", preset->preset);
  moe_ = preset->moe;
  // torchtitan's Llama norms (2024 layout): RMSNorm as the presets have it, fused or compiled; a LayerNorm instead is
  // priced as the preset's RMSNorm.
  if (const auto norm = text("model", "norm_type"); norm && *norm != "rmsnorm" && *norm != "fused_rmsnorm")
    approximated_.push_back("[model] norm_type = \"" + *norm + "\" (priced as the preset's RMSNorm)");
  float8_training();
}

// Float8 training: [float8] enable_float8_linear = true (torchtitan's switch until early 2025), or a model converter
// named float8 (from 2025: "float8", later "quantize.linear.float8"; MX likewise, "mx" or "quantize.linear.mx"). A
// [float8] table alone only holds the converter's settings: torchtitan's own TOMLs keep one with the converter
// commented out.
void TorchtitanReader::float8_training()
{
  const bool mx = converter("mx");
  const bool float8 = !mx && (flag("float8", "enable_float8_linear").value_or(false) || converter("float8"));
  if (mx) {
    run_.set("workload.model.fp8", "mxfp8");
    approximated_.push_back("the mx converter (priced as Transformer Engine's MXFP8 recipe)");
  }
  if (!float8) {
    for (const char* key : {"enable_fsdp_float8_all_gather", "precompute_float8_dynamic_scale_for_fsdp", "recipe_name",
                            "filter_fqns", "force_recompute_fp8_weight_in_bwd"})
      if (at("float8", key))
        no_effect_.push_back(std::string("float8.") + key + " (Float8 training is off)");
    return;
  }
  run_.set("workload.model.fp8", "tensorwise");
  approximated_.push_back("float8 (priced as Transformer Engine's fused tensor-wise recipe; FP8 linears written in "
                          "PyTorch gained 0.96-1.07x a layer on the H200, docs/calibration.md)");
  // FSDP2 gathers the Float8Linear weights already cast (torchao's float8 all-gather), as Megatron-Core's
  // fp8_param_gather does, where there are shards to gather; the scales it precomputes for them in one pass cost
  // nothing a step notices.
  const auto shard = integer(table_of("data_parallel_shard_degree"), "data_parallel_shard_degree", true);
  if (const auto gather = flag("float8", "enable_fsdp_float8_all_gather"); gather && *gather) {
    if (!shard || *shard != 1)
      run_.set("workload.framework.fp8_param_gather", true);
    else
      no_effect_.push_back("float8.enable_fsdp_float8_all_gather (no FSDP shards to gather)");
  }
  if (flag("float8", "force_recompute_fp8_weight_in_bwd"))
    no_effect_.push_back("float8.force_recompute_fp8_weight_in_bwd (the weights' FP8 copies cast again in backward "
                         "rather than kept: memory the step does not count)");
  if (flag("float8", "precompute_float8_dynamic_scale_for_fsdp"))
    no_effect_.push_back("float8.precompute_float8_dynamic_scale_for_fsdp (the weights' scales in one pass after "
                         "the optimizer step)");
  if (const auto recipe = text("float8", "recipe_name"); recipe && *recipe != "tensorwise")
    approximated_.push_back("[float8] recipe_name = \"" + *recipe +
                            "\" (priced as tensorwise: row-wise scaling ran at 0.93-1.09 of its rate on the H200)");
  // The modules kept in bf16: torchtitan's default is the output layer, which the recipe keeps in bf16 too.
  if (const toml::node* kept = at("float8", "filter_fqns")) {
    const bool output_only = kept->value<std::string>() == std::optional<std::string>("output") ||
                             (kept->is_array() && kept->as_array()->size() == 1 &&
                              (*kept->as_array())[0].value<std::string>() == std::optional<std::string>("output"));
    if (!output_only)
      approximated_.push_back("float8.filter_fqns (the output layer alone is kept in bf16)");
  }
}

void TorchtitanReader::parallelism()
{
  static const std::map<std::string, const char*> degrees{{"tensor_parallel_degree", "workload.parallel.tp"},
                                                          {"pipeline_parallel_degree", "workload.parallel.pp"},
                                                          {"context_parallel_degree", "workload.parallel.cp"}};
  for (const auto& [key, path] : degrees)
    if (const auto v = integer(table_of(key.c_str()), key.c_str()); v && *v > 1)
      run_.set(path, int(*v));
  // torchtitan's tensor-parallel plan shards the norms and the residual stream along the sequence (SequenceParallel
  // on the norms, sequence-sharded inputs and outputs of the attention and the MLP): Megatron's sequence parallelism.
  if (const auto tp = integer(table_of("tensor_parallel_degree"), "tensor_parallel_degree"); tp && *tp > 1)
    run_.set("workload.parallel.sequence_parallel", true);
  const auto shard = integer(table_of("data_parallel_shard_degree"), "data_parallel_shard_degree", true);
  const auto replicate = integer(table_of("data_parallel_replicate_degree"), "data_parallel_replicate_degree");
  if (!shard || *shard != 1) // FSDP2 shards parameters, gradients and optimizer state over its shard group
    run_.set("workload.parallel.zero", 3);
  if (replicate && *replicate > 1 && (!shard || *shard != 1)) // HSDP; a shard degree of 1 is plain DDP
    run_.set("workload.parallel.dp_replicate", int(*replicate));
  // How context-parallel ranks exchange keys and values (torchtitan's default: allgather, the shards gathered after
  // the first block of attention; alltoall passes them round the ring).
  const char* rotate_at = table_of("context_parallel_rotate_method");
  const auto rotate = text(rotate_at, "context_parallel_rotate_method");
  if (rotate && *rotate != "allgather" && *rotate != "alltoall")
    fail(*at(rotate_at, "context_parallel_rotate_method"),
         "context_parallel_rotate_method is allgather or alltoall, not '" + *rotate + "'");
  if (const auto cp = integer(table_of("context_parallel_degree"), "context_parallel_degree"); cp && *cp > 1)
    run_.set("workload.parallel.cp_comm", rotate && *rotate == "alltoall" ? "p2p" : "allgather");
  if (const auto async_tp = flag(table_of("enable_async_tensor_parallel"), "enable_async_tensor_parallel");
      async_tp && *async_tp)
    run_.set("workload.framework.tp_comm_overlap", true);
  // FSDP's resharding (apply_fsdp): "default" keeps a pipelined stage gathered for the step, as the fsdp profile
  // does; "always" reshards after every forward, and the pipeline then gathers each microbatch; "never" without a
  // pipeline keeps the gathered layers between forward and backward, which is not modelled.
  if (const auto reshard = text("parallelism", "fsdp_reshard_after_forward")) {
    if (*reshard != "default" && *reshard != "always" && *reshard != "never")
      fail(*at("parallelism", "fsdp_reshard_after_forward"),
           "fsdp_reshard_after_forward is default, always or never, not '" + *reshard + "'");
    const auto pp = integer(table_of("pipeline_parallel_degree"), "pipeline_parallel_degree");
    if (*reshard == "always" && pp && *pp > 1) {
      run_.set("workload.framework.pipeline_keeps_unsharded", false);
      approximated_.push_back("[parallelism] fsdp_reshard_after_forward = \"always\" with a pipeline (gathers and "
                              "reductions priced every microbatch; torch's pipelining still reduces once a step)");
    } else if (*reshard == "never" && !(pp && *pp > 1))
      approximated_.push_back("[parallelism] fsdp_reshard_after_forward = \"never\" without a pipeline (the layers "
                              "are gathered again for backward)");
  }
  // torchtitan's device mesh is [pp, dp_replicate, dp_shard, cp, tp] (ParallelDims): the pipeline outermost.
  run_.set("workload.parallel.placement", "tp-dp-pp");
  const char* schedule_at = table_of("pipeline_parallel_schedule");
  if (const auto schedule = text(schedule_at, "pipeline_parallel_schedule")) {
    static const std::map<std::string, std::string> schedules{
        {"1F1B", "1f1b"}, {"GPipe", "gpipe"}, {"Interleaved1F1B", "interleaved-1f1b"}};
    const auto it = schedules.find(*schedule);
    if (it == schedules.end())
      fail(*at(schedule_at, "pipeline_parallel_schedule"),
           "pipeline_parallel_schedule is 1F1B, GPipe or Interleaved1F1B here, not '" + *schedule + "'");
    run_.set("policies.pipeline", it->second);
  }
  expert_parallelism();
}

// torchtitan's expert parallelism (ParallelDims, job_config.py): its degree, the experts' tensor parallelism (1, the
// TP ranks then joining the EP group, or tp) and the EP exchange (PyTorch's all-to-all, "standard", DeepEP's or
// HybridEP's kernels), all read only for a model with experts (and the last two with ep > 1), as torchtitan reads them.
void TorchtitanReader::expert_parallelism()
{
  const auto ep = integer("parallelism", "expert_parallel_degree");
  const auto tp = integer(table_of("tensor_parallel_degree"), "tensor_parallel_degree");
  const auto etp = integer("parallelism", "expert_tensor_parallel_degree");
  const auto backend = text("parallelism", "expert_parallel_comm_backend");
  static const std::map<std::string, std::string> dispatchers{
      {"standard", "alltoall"}, {"deepep", "deepep"}, {"hybridep", "hybridep"}};
  if (backend && !dispatchers.count(*backend))
    fail(*at("parallelism", "expert_parallel_comm_backend"),
         "expert_parallel_comm_backend is standard, deepep or hybridep, not '" + *backend + "'");
  if (!moe_ || !ep || *ep == 1) {
    if (ep && *ep > 1)
      no_effect_.push_back("parallelism.expert_parallel_degree (the model has no experts)");
    if (etp)
      no_effect_.push_back("parallelism.expert_tensor_parallel_degree (without experts and ep > 1)");
    if (backend)
      no_effect_.push_back("parallelism.expert_parallel_comm_backend (without experts and ep > 1)");
    return;
  }
  const std::int64_t tensor = tp ? *tp : 1, expert_tensor = etp ? *etp : 1;
  if (expert_tensor != 1 && expert_tensor != tensor)
    fail(*at("parallelism", "expert_tensor_parallel_degree"),
         fmt::format("expert_tensor_parallel_degree is 1 or the tensor-parallel degree ({}), not {}", tensor,
                     expert_tensor));
  run_.set("workload.parallel.ep", int(*ep));
  if (tensor > 1)
    run_.set("workload.parallel.etp", int(expert_tensor));
  run_.set("workload.model.moe.dispatcher", dispatchers.at(backend ? *backend : "standard"));
}

void TorchtitanReader::training()
{
  auto local = integer("training", "local_batch_size");
  if (!local)
    local = integer("training", "batch_size"); // its name before 2025
  pipeline(local);
  if (const auto global = integer("training", "global_batch_size", true); global && *global > 0)
    run_.set("workload.batch.global", int(*global));
  if (const auto seq = integer("training", "seq_len"))
    run_.set("workload.model.seq", int(*seq));
  if (const auto mp = text("training", "mixed_precision_param")) {
    if (*mp != "bfloat16" && *mp != "float32")
      fail(*at("training", "mixed_precision_param"), "mixed_precision_param is bfloat16 or float32, not '" + *mp + "'");
    run_.set("workload.model.dtype", *mp == "bfloat16" ? "bf16" : "fp32");
  }
  if (const auto mode = text("activation_checkpoint", "mode")) {
    if (*mode != "none" && *mode != "selective" && *mode != "full")
      fail(*at("activation_checkpoint", "mode"), "mode is none, selective or full, not '" + *mode + "'");
    run_.set("workload.model.recompute", *mode);
    if (*mode == "selective") { // op-level (the default): every matmul output but every second one kept
      const toml::node* option = at("activation_checkpoint", "selective_ac_option");
      const std::string shown = option
                                    ? (option->is_string() ? *option->value<std::string>()
                                                           : std::to_string(option->value<std::int64_t>().value_or(0)))
                                    : "op";
      if (shown == "op") {
        YAML::Node modules(YAML::NodeType::Sequence);
        modules.push_back("op_sac");
        run_.set("workload.model.recompute_modules", modules);
      } else {
        layer_checkpointing(*option, shown);
      }
    }
  } else {
    run_.set("workload.model.recompute", "none");
  }
  // Compiled, the fsdp profile's fused kernels; eager (no [compile] enable), torch-eager's composite RMSNorm, SiLU
  // apart from the product, unfused rotation and repeated keys and values (docs/frameworks.md).
  auto on = [&](const char* table, const char* key) {
    const toml::node* n = at(table, key);
    return n && n->value<bool>().value_or(false);
  };
  compiled_ = on("training", "compile") || on("compile", "enable");
}

bool TorchtitanReader::converter(const std::string& kind)
{
  const toml::node* n = at("model", "converters");
  if (!n)
    return false;
  std::vector<std::string> names;
  if (const auto one = n->value<std::string>())
    names = torchtitan_list(*one);
  else if (n->is_array())
    for (const auto& c : *n->as_array()) {
      const auto v = c.value<std::string>();
      if (!v)
        fail(c, "[model] converters lists names (strings)");
      for (auto& name : torchtitan_list(*v))
        names.push_back(std::move(name));
    }
  else
    fail(*n, "[model] converters is a name or a list of names");
  for (const std::string& name : names) {
    if (name == kind ||
        (name.size() > kind.size() && name.compare(name.size() - kind.size() - 1, std::string::npos, "." + kind) == 0))
      return true;
  }
  return false;
}

void TorchtitanReader::report_the_rest()
{
  // Tables that change nothing a step costs.
  static const std::set<std::string> no_effect{
      "job",  "profiling",  "metrics",         "optimizer",         "lr_scheduler", "checkpoint",
      "comm", "validation", "fault_tolerance", "memory_estimation", "experimental"};
  static const std::set<std::string> no_effect_keys{
      "model.tokenizer_path", "model.hf_assets_path", "training.dataset", "training.dataset_path", "training.steps",
      "training.max_norm",    "training.seed",        "training.gc_freq", "training.deterministic"};
  std::vector<std::string> ignored(no_effect_), unknown;
  for (const auto& [table, node] : doc_) {
    const std::string t(table.str());
    if (!node.is_table()) {
      unknown.push_back(t);
      continue;
    }
    for (const auto& [key, value] : *node.as_table()) {
      const std::string path = t + "." + std::string(key.str());
      if (used_.count(path))
        continue;
      (no_effect.count(t) || no_effect_keys.count(path) ? ignored : unknown).push_back(path);
    }
  }
  auto joined = [](const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ", ")); };
  if (!approximated_.empty())
    run_.warn("approximated: " + joined(approximated_));
  if (!ignored.empty())
    run_.warn("read but not modelled (no effect on the simulated step): " + joined(ignored));
  if (!unknown.empty())
    run_.warn("not known to the importer, so not modelled: " + joined(unknown));
}

void TorchtitanReader::read()
{
  model();
  parallelism();
  training();
  report_the_rest();
  // FSDP2 with torchtitan's policy (bf16 compute, fp32 reduction), compiled or in eager. Its attention repeats the
  // grouped keys and values to every query head before SDPA either way (repeat_kv in its model code).
  run_.set("workload.framework.name", compiled_ ? "fsdp" : "torch-eager");
  run_.set("workload.framework.repeat_kv", true);
}

bool looks_like_torchtitan(const std::string& text)
{
  try {
    const toml::table doc = toml::parse(text);
    return doc.contains("model") || doc.contains("parallelism");
  } catch (const toml::parse_error&) {
    return false;
  }
}

toml::table parse_torchtitan_toml(const std::string& text, const std::string& source)
{
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw InputError(source, int(e.source().begin.line), int(e.source().begin.column),
                     "not TOML: " + std::string(e.description()));
  }
}

ImportedRun read_torchtitan_toml(const std::string& text, const std::string& source)
{
  return read_torchtitan_table(parse_torchtitan_toml(text, source), source, nullptr);
}

ImportedRun read_torchtitan_table(const toml::table& doc, const std::string& source, const OverridePlaces* placed)
{
  ImportedRun run;
  run.set("workload.kind", "transformer-training");
  TorchtitanReader(doc, source, run, placed).read();
  return run;
}

} // namespace cs
