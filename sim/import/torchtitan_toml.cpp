// torchtitan's JobConfig (torchtitan/config/job_config.py) as its train_configs spell it. FSDP2 with its
// mixed-precision policy is the `fsdp` framework profile with ZeRO-3 over the data-parallel shards; model flavors map
// to presets.
#include "sim/import/torchtitan_toml.hpp"

#include "base/input_error.hpp"
#include "models/transformer/model_params.hpp"
#include "sim/import/torchtitan_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <toml++/toml.h>

namespace cs {

namespace {

class TomlReader {
public:
  TomlReader(const toml::table& doc, const std::string& source, ImportedRun& run)
      : doc_(doc), source_(source), run_(run)
  {}

  [[noreturn]] void fail(const toml::node& n, const std::string& message) const
  {
    throw InputError(source_, int(n.source().begin.line), int(n.source().begin.column), message);
  }
  const toml::node* at(const char* table, const char* key)
  {
    const toml::node* n = doc_.at_path(std::string(table) + "." + key).node();
    if (n)
      used_.insert(std::string(table) + "." + key);
    return n;
  }
  std::optional<std::int64_t> integer(const char* table, const char* key, bool minus_one = false)
  {
    const toml::node* n = at(table, key);
    if (!n)
      return std::nullopt;
    const auto v = n->value<std::int64_t>();
    if (!v || !(*v > 0 || (minus_one && *v == -1)) || *v > (1 << 30))
      fail(*n, fmt::format("[{}] {} must be a positive whole number{}", table, key, minus_one ? " or -1" : ""));
    return v;
  }
  std::optional<std::string> text(const char* table, const char* key)
  {
    const toml::node* n = at(table, key);
    if (!n)
      return std::nullopt;
    const auto v = n->value<std::string>();
    if (!v)
      fail(*n, fmt::format("[{}] {} must be a string", table, key));
    return v;
  }
  std::optional<bool> flag(const char* table, const char* key)
  {
    const toml::node* n = at(table, key);
    if (!n)
      return std::nullopt;
    const auto v = n->value<bool>();
    if (!v)
      fail(*n, fmt::format("[{}] {} must be true or false", table, key));
    return v;
  }

  // torchtitan moved its parallelism settings into [parallelism] in March 2025 (785c34c). Before, the degrees of
  // data and tensor parallelism lived in [training] and the pipeline's, context parallelism's and async TP's in
  // [experimental]: the table that holds `key` in this file, [parallelism] when none does.
  const char* table_of(const char* key) const
  {
    if (doc_.at_path(std::string("parallelism.") + key))
      return "parallelism";
    static const std::set<std::string> in_training{"data_parallel_shard_degree", "data_parallel_replicate_degree",
                                                   "tensor_parallel_degree"};
    const char* older = in_training.count(key) ? "training" : "experimental";
    return doc_.at_path(std::string(older) + "." + key) ? older : "parallelism";
  }

  void read();

private:
  void model();
  void parallelism();
  void expert_parallelism();
  void training();
  // A pipelined run as its TOML states it: the degree, the table that holds it, the schedule.
  struct Pipeline {
    std::int64_t degree = 1;
    const char* degree_at = "parallelism";
    bool layout_2024 = false; // [experimental] holds it: the rules of torchtitan's December 2024 release
    std::string schedule;
    bool looped = false; // more than one stage a rank (Interleaved1F1B)
  };
  void pipeline(std::optional<std::int64_t> local);
  void microbatches(const Pipeline& p, std::optional<std::int64_t> local);
  void stages(const Pipeline& p);
  std::vector<int> weighted_stages(const Pipeline& p, int layers);
  void layer_checkpointing(const toml::node& option, const std::string& every);
  void report_the_rest();

  const toml::table& doc_;
  std::string source_;
  ImportedRun& run_;
  std::set<std::string> used_;
  std::vector<std::string> approximated_;
  std::vector<std::string> no_effect_; // read, but torchtitan itself ignores them in this configuration
  bool moe_ = false;                   // the flavor's preset routes its tokens to experts
  bool compiled_ = false;              // torch.compile: the fused kernels of the fsdp profile, else torch-eager's
};

void TomlReader::model()
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
  // Float8 training as a model converter (newer torchtitan) or a [float8] table (older; its enable_float8_linear
  // switch until 2025, the table's presence after).
  bool float8 = doc_.contains("float8");
  if (const auto linear = flag("float8", "enable_float8_linear"))
    float8 = *linear;
  if (const toml::node* conv = at("model", "converters"); conv && conv->is_array())
    for (const auto& c : *conv->as_array())
      float8 = float8 || c.value<std::string>() == std::optional<std::string>("float8");
  if (float8) {
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
    if (flag("float8", "precompute_float8_dynamic_scale_for_fsdp"))
      no_effect_.push_back("float8.precompute_float8_dynamic_scale_for_fsdp (the weights' scales in one pass after "
                           "the optimizer step)");
    if (const auto recipe = text("float8", "recipe_name"); recipe && *recipe != "tensorwise")
      approximated_.push_back("[float8] recipe_name = \"" + *recipe +
                              "\" (priced as tensorwise: row-wise scaling ran at 0.93-1.09 of its rate on the H200)");
  } else {
    for (const char* key : {"enable_fsdp_float8_all_gather", "precompute_float8_dynamic_scale_for_fsdp", "recipe_name"})
      if (at("float8", key))
        no_effect_.push_back(std::string("float8.") + key + " (Float8 training is off)");
  }
}

void TomlReader::parallelism()
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
void TomlReader::expert_parallelism()
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

void TomlReader::training()
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

// How torchtitan cuts a pipelined rank's local batch into microbatches and its layers into stages, by the rules of
// the release its layout belongs to (sim/import/torchtitan_rules.hpp; docs/import.md). Without a pipeline the local
// batch is one microbatch. A 2024-layout file without a count runs as many microbatches as pipeline ranks (9dec370).
void TomlReader::pipeline(std::optional<std::int64_t> local)
{
  Pipeline p;
  p.degree_at = table_of("pipeline_parallel_degree");
  const auto pp = integer(p.degree_at, "pipeline_parallel_degree");
  if (!pp || *pp == 1) {
    if (local)
      run_.set("workload.batch.micro", int(*local));
    return;
  }
  p.degree = *pp;
  p.layout_2024 = std::string(p.degree_at) == "experimental";
  p.schedule = text(table_of("pipeline_parallel_schedule"), "pipeline_parallel_schedule").value_or("1F1B");
  p.looped = p.schedule == "Interleaved1F1B";
  if (local)
    run_.local_batch = int(*local);
  microbatches(p, local);
  stages(p);
}

void TomlReader::microbatches(const Pipeline& p, std::optional<std::int64_t> local)
{
  const char* count_at = table_of("pipeline_parallel_microbatches");
  const auto size = integer("parallelism", "pipeline_parallel_microbatch_size");
  auto count = integer(count_at, "pipeline_parallel_microbatches");
  const toml::node* count_node =
      count ? at(count_at, "pipeline_parallel_microbatches") : at(p.degree_at, "pipeline_parallel_degree");
  if (!size && !count && p.layout_2024) {
    count = p.degree;
    if (p.looped)
      approximated_.push_back(fmt::format("microbatches of a looped schedule ({} a step, torchtitan's default in "
                                          "December 2024; from 2025-01-07 it was pp x stages a rank)",
                                          p.degree));
  }
  if (size) {
    run_.set("workload.batch.micro", int(*size));
  } else if (count) {
    if (!local)
      fail(*count_node, "[training] batch_size (local_batch_size) is needed to cut it into microbatches");
    if (*local % *count != 0)
      fail(*count_node,
           fmt::format("the local batch of {} does not split into {} microbatches (torchtitan refuses it too)", *local,
                       *count));
    run_.set("workload.batch.micro", int(*local / *count));
  } else {
    run_.set("workload.batch.micro", 1);
  }
}

void TomlReader::stages(const Pipeline& p)
{
  const int layers = model_presets().at(run_.get("workload.model.preset").as<std::string>()).layers;
  std::vector<int> stages;
  if (const toml::node* points = at(table_of("pipeline_parallel_split_points"), "pipeline_parallel_split_points")) {
    stages = torchtitan_split_points(*points, layers, source_);
    const std::int64_t n = std::int64_t(stages.size());
    if (n % p.degree != 0 || (n / p.degree > 1) != p.looped)
      fail(*points, fmt::format("{} split points make {} stages: {} on {} pipeline ranks ({})", n - 1, n,
                                p.looped ? "two or more a rank" : "one a rank", p.degree, p.schedule));
  } else if (p.layout_2024) {
    const int total = int(p.degree) * (p.looped ? 2 : 1);
    if (total > layers)
      fail(*at(p.degree_at, "pipeline_parallel_degree"),
           fmt::format("{} pipeline stages are more than the model's {} layers", total, layers));
    stages = torchtitan_even_split(layers, total);
  } else {
    stages = weighted_stages(p, layers);
  }
  if (!stages.empty()) {
    YAML::Node list(YAML::NodeType::Sequence);
    for (int n : stages)
      list.push_back(n);
    run_.set("workload.parallel.stage_layers", list);
  }
  if (p.looped)
    run_.set("workload.parallel.vpp", int(std::int64_t(stages.size()) / p.degree));
}

// The newer releases' split by weight, from the ends' weights and pipeline_parallel_layers_per_stage.
std::vector<int> TomlReader::weighted_stages(const Pipeline& p, int layers)
{
  auto weight = [&](const char* key) {
    const toml::node* n = at("parallelism", key);
    const auto v = n ? n->value<std::int64_t>() : std::optional<std::int64_t>(1);
    if (!v || *v < 0 || *v > layers)
      fail(*n, fmt::format("[parallelism] {} is a whole number from 0 to the model's {} layers", key, layers));
    return int(*v);
  };
  const TorchtitanWeights w{weight("pipeline_parallel_first_stage_less_layers"),
                            weight("pipeline_parallel_last_stage_less_layers")};
  const toml::node* per_stage = at("parallelism", "pipeline_parallel_layers_per_stage");
  const auto lps = integer("parallelism", "pipeline_parallel_layers_per_stage");
  try {
    return torchtitan_weighted_stages(layers, int(p.degree), p.looped ? 2 : 1, w, lps ? int(*lps) : 0, p.schedule);
  } catch (const std::invalid_argument& e) {
    fail(per_stage ? *per_stage : *at(p.degree_at, "pipeline_parallel_degree"), e.what());
  }
}

// Layer-level selective checkpointing (selective_ac_option = "N"): torchtitan checkpoints every N-th block of a rank
// whole (_apply_ac_to_transformer_block's counter), so a stage of L blocks recomputes L / N of them and keeps the rest:
// Megatron's block method with that many layers a virtual stage.
void TomlReader::layer_checkpointing(const toml::node& option, const std::string& every)
{
  if (every.empty() || every.size() > 6 || every.find_first_not_of("0123456789") != std::string::npos || every == "0")
    fail(option, "selective_ac_option is \"op\" or a whole number of blocks, not '" + every + "'");
  const int layers = model_presets().at(run_.get("workload.model.preset").as<std::string>()).layers;
  int per_stage = layers / (run_.has("workload.parallel.pp") ? run_.get("workload.parallel.pp").as<int>() : 1) /
                  (run_.has("workload.parallel.vpp") ? run_.get("workload.parallel.vpp").as<int>() : 1);
  if (run_.has("workload.parallel.stage_layers"))
    for (const auto& n : run_.get("workload.parallel.stage_layers"))
      per_stage = std::max(per_stage, n.as<int>());
  const int recomputed = per_stage / std::stoi(every);
  run_.set("workload.model.recompute", recomputed > 0 ? "full" : "none");
  if (recomputed > 0) {
    run_.set("workload.model.recompute_method", "block");
    run_.set("workload.model.recompute_num_layers", recomputed);
  }
}

void TomlReader::report_the_rest()
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

void TomlReader::read()
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

} // namespace

bool looks_like_torchtitan(const std::string& text)
{
  try {
    const toml::table doc = toml::parse(text);
    return doc.contains("model") || doc.contains("parallelism");
  } catch (const toml::parse_error&) {
    return false;
  }
}

ImportedRun read_torchtitan_toml(const std::string& text, const std::string& source)
{
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw InputError(source, int(e.source().begin.line), int(e.source().begin.column),
                     "not TOML: " + std::string(e.description()));
  }
  ImportedRun run;
  run.set("workload.kind", "transformer-training");
  TomlReader(doc, source, run).read();
  return run;
}

} // namespace cs
