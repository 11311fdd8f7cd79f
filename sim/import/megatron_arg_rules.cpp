// The rules that tie Megatron-LM's flags together: the dispatcher's type and flex backend, sliding-window attention,
// the MoE layer frequency and capacity, the pipeline's uneven stages and layouts, and the userbuffers configuration.
#include "sim/import/megatron_arg_reader.hpp"

#include "models/parallel/pipeline_layout.hpp"
#include "models/transformer/userbuffers_configs.hpp"
#include "sim/import/megatron_flags.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <yaml-cpp/yaml.h>

namespace cs::megatron_import {

// Megatron-Core's dispatcher: --moe-token-dispatcher-type (allgather by default), and with flex the backend
// --moe-flex-dispatcher-backend (deepep by default, or hybridep); --moe-enable-deepep is the old spelling of flex with
// DeepEP. The unified --moe-flex-dispatcher-num-sms sets the chosen backend's SMs.
void ArgReader::apply_dispatcher(const Token& flag, const std::vector<Token>& values)
{
  const std::string& f = flag.text;
  if (f == "moe-enable-deepep") {
    dispatcher_type_ = "flex";
    flex_backend_ = "deepep";
    return;
  }
  if (values.empty())
    fail(flag, "--" + f + " needs a value");
  const Token& v = values[0];
  if (f == "moe-flex-dispatcher-num-sms") {
    flex_sms_ = positive_int(flag, v);
    return;
  }
  const bool type = f == "moe-token-dispatcher-type";
  const std::set<std::string> valid =
      type ? std::set<std::string>{"allgather", "alltoall", "flex"} : std::set<std::string>{"deepep", "hybridep"};
  if (!valid.count(v.text))
    fail(v, fmt::format("--{} is one of {}, not '{}'", f, fmt::join(valid, ", "), v.text));
  (type ? dispatcher_type_ : flex_backend_) = v.text;
}

void ArgReader::resolve_dispatcher()
{
  if (!run_.has("workload.model.moe.experts"))
    return;
  const std::string chosen = megatron_dispatcher(dispatcher_type_, flex_backend_);
  run_.set("workload.model.moe.dispatcher", chosen);
  if (!flex_backend_.empty() && dispatcher_type_ != "flex")
    ignored_.push_back("--moe-flex-dispatcher-backend " + flex_backend_ + " (read only with the flex dispatcher type)");
  if (flex_sms_ > 0 && dispatcher_type_ == "flex")
    run_.set(chosen == "hybridep" ? "workload.model.moe.hybridep_sms" : "workload.model.moe.deepep_sms", flex_sms_);
}

// Sharded data parallelism besides the distributed optimizer (ZeRO-1): --use-torch-fsdp2 wraps the model in PyTorch's
// FSDP2, which shards parameters, gradients and optimizer state (ZeRO-3); Megatron-FSDP (--use-megatron-fsdp) shards
// by --data-parallel-sharding-strategy (no_shard, its default, optim, optim_grads, optim_grads_params: ZeRO 0 to 3),
// and its outer strategy no_shard replicates the shards over --num-distributed-optimizer-instances (HSDP).
void ArgReader::resolve_sharding()
{
  static const std::map<std::string, int> stages{
      {"no_shard", 0}, {"optim", 1}, {"optim_grads", 2}, {"optim_grads_params", 3}};
  const auto strategy = seen_.find("data-parallel-sharding-strategy");
  if (strategy != seen_.end() && !stages.count(strategy->second.text))
    fail(strategy->second, "--data-parallel-sharding-strategy is one of no_shard, optim, optim_grads, "
                           "optim_grads_params, not '" +
                               strategy->second.text + "'");
  if (seen_.count("use-megatron-fsdp"))
    run_.set("workload.parallel.zero", strategy == seen_.end() ? 0 : stages.at(strategy->second.text));
  else if (strategy != seen_.end())
    ignored_.push_back("--data-parallel-sharding-strategy " + strategy->second.text +
                       " (read only with --use-megatron-fsdp)");
  if (seen_.count("use-torch-fsdp2"))
    run_.set("workload.parallel.zero", 3);
  if (const auto outer = seen_.find("outer-dp-sharding-strategy"); outer != seen_.end()) {
    if (outer->second.text != "no_shard")
      unknown_.push_back("--outer-dp-sharding-strategy " + outer->second.text +
                         " (sharding across the distributed-optimizer instances is not modelled: they replicate)");
  }
}

// Sliding-window attention: --window-size (left,right) as Transformer Engine reads it (the query, `left` keys before
// and `right` after it), --window-attn-skip-freq N (every N-th layer full), --softmax-type learnable or off-by-one.
void ArgReader::apply_window(const Token& flag, const Token& v)
{
  const std::string& f = flag.text;
  if (f == "softmax-type") {
    if (v.text != "vanilla" && v.text != "off-by-one" && v.text != "learnable")
      fail(v, "--softmax-type is one of vanilla, off-by-one, learnable, not '" + v.text + "'");
    softmax_type_ = v.text;
    return;
  }
  if (f == "window-attn-skip-freq") {
    window_skip_ = positive_int(flag, v);
    return;
  }
  int left = 0, right = 0;
  if (!parse_window_size(v.text, left, right) || left < 1 || left > (1 << 24))
    fail(v, "--window-size takes (left,right) with left a positive key count, not '" + v.text + "'");
  if (right != 0)
    fail(v, "--window-size " + v.text + ": keys after the query (right > 0) are not modelled (a causal decoder has 0)");
  window_left_ = left;
}

void ArgReader::resolve_window()
{
  const bool sinks = softmax_type_ == "learnable" || softmax_type_ == "off-by-one";
  if (window_left_ < 0) {
    if (sinks)
      ignored_.push_back("--softmax-type " + softmax_type_ +
                         " (attention sinks are priced with a sliding window only)");
    if (window_skip_ > 0)
      ignored_.push_back(fmt::format("--window-attn-skip-freq {} (read only with --window-size)", window_skip_));
    return;
  }
  run_.set("workload.model.sliding_window.window", window_left_ + 1); // the query itself included
  if (window_skip_ > 0)
    run_.set("workload.model.sliding_window.full_every", window_skip_);
  if (sinks)
    run_.set("workload.model.sliding_window.sinks", true);
}

// A YAML file of Transformer Engine's ub_cfgs (NeMo-Framework-Launcher's conf/training/tp_overlap/*.yaml, what
// Megatron-LM's --tp-comm-overlap-cfg names): each layer's method, num_sm and set_sm_margin as
// framework.tp_overlap; its other keys (cga_size, num_splits, aggregate, fp8_buf, ...) named as not modelled. A
// malformed file is refused at its own line and column.
void ArgReader::read_tp_overlap_file(const std::string& path)
{
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::ParserException& e) {
    throw InputError(path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  auto at = [&path](const YAML::Node& n, const std::string& message) {
    return InputError(path, n.Mark().line + 1, n.Mark().column + 1, message);
  };
  if (!root.IsMap())
    throw at(root, "a userbuffers configuration is a map of layer names (qkv_fprop, proj_fprop, ...)");
  const auto& layers = ub_layer_names();
  YAML::Node out(YAML::NodeType::Map);
  std::set<std::string> unread;
  for (const auto& entry : root) {
    const std::string layer = entry.first.as<std::string>();
    if (std::find(layers.begin(), layers.end(), layer) == layers.end())
      throw at(entry.first, fmt::format("'{}' is not a userbuffers layer ({})", layer, fmt::join(layers, ", ")));
    if (!entry.second.IsMap())
      throw at(entry.second, "'" + layer + "' must be a map {method, num_sm, set_sm_margin, ...}");
    YAML::Node o(YAML::NodeType::Map);
    for (const auto& kv : entry.second) {
      const std::string key = kv.first.as<std::string>();
      const std::string v = kv.second.IsScalar() ? kv.second.Scalar() : "";
      if (key == "method") {
        if (v != "ring_exchange" && v != "pipeline" && v != "bulk")
          throw at(kv.second, "method is one of ring_exchange, pipeline, bulk, not '" + v + "'");
        o["method"] = v;
      } else if (key == "num_sm") {
        int n = -1;
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec != std::errc() || p != v.data() + v.size() || n < 0)
          throw at(kv.second, "num_sm takes a whole number of SMs, not '" + v + "'");
        o["num_sm"] = n;
      } else if (key == "set_sm_margin") {
        if (v != "0" && v != "1" && v != "true" && v != "false" && v != "True" && v != "False")
          throw at(kv.second, "set_sm_margin is 0 or 1, not '" + v + "'");
        o["set_sm_margin"] = v == "1" || v == "true" || v == "True";
      } else {
        unread.insert(key);
      }
    }
    out[layer] = o;
  }
  run_.set("workload.framework.tp_overlap", out);
  if (!unread.empty())
    ignored_.push_back(fmt::format("--tp-comm-overlap-cfg {}: {}", path, fmt::join(unread, ", ")));
}

// --tp-comm-overlap-cfg (a YAML file of Transformer Engine's ub_cfgs) or Megatron-Bridge's
// comm_overlap.tp_comm_overlap_cfg (a configuration by name): a file found (as given, or beside the argument list) is
// read; else one the simulator ships under that name (userbuffers_configs) is taken as that configuration; else TE's
// defaults stand, and the import says so.
void ArgReader::apply_tp_overlap_cfg(const Token& value)
{
  namespace fs = std::filesystem;
  fs::path file = value.text;
  if (file.is_relative() && !fs::exists(file))
    file = fs::path(source_).parent_path() / value.text;
  std::error_code ec;
  if (fs::is_regular_file(file, ec))
    return read_tp_overlap_file(file.string());
  std::string name = value.text.substr(value.text.find_last_of('/') + 1);
  for (const std::string ext : {".yaml", ".yml"})
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      name.resize(name.size() - ext.size());
  if (userbuffers_configs().count(name))
    return run_.set("workload.framework.tp_overlap", name);
  ignored_.push_back("--tp-comm-overlap-cfg " + value.text +
                     " (not a configuration the simulator ships: Transformer Engine's default overlaps stand)");
}

void ArgReader::apply_moe(const Token& flag, const Token& v)
{
  if (flag.text == "moe-expert-capacity-factor") {
    double factor = 0;
    const auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), factor);
    if (ec != std::errc() || p != v.text.data() + v.text.size() || !(factor > 0))
      fail(v, "--moe-expert-capacity-factor takes a positive number, not '" + v.text + "'");
    return run_.set("workload.model.moe.capacity_factor", factor);
  }
  int every = 0;
  const auto [p, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), every);
  if (ec == std::errc() && p == v.text.data() + v.text.size() && every > 0)
    return run_.set("workload.model.moe.every", every);
  // Megatron's list form "([0]*3+[1]*58)": dense layers first, then an MoE layer each.
  int dense = 0, moe = 0;
  if (std::sscanf(v.text.c_str(), "([0]*%d+[1]*%d)", &dense, &moe) != 2 &&
      std::sscanf(v.text.c_str(), "[0]*%d+[1]*%d", &dense, &moe) != 2)
    fail(v, "--moe-layer-freq: a whole number or the form ([0]*N+[1]*M), not '" + v.text + "'");
  run_.set("workload.model.moe.first_dense", dense);
  run_.set("workload.model.moe.every", 1);
}

// Megatron's uneven pipeline (--decoder-first/last-pipeline-num-layers): the first and last stages take the layers
// given, the others share the rest evenly; written as stage_layers.
void ArgReader::uneven_stages()
{
  if (!run_.has("import.first") && !run_.has("import.last"))
    return;
  const int pp = run_.has("workload.parallel.pp") ? run_.get("workload.parallel.pp").as<int>() : 1;
  const int layers = run_.has("workload.model.layers") ? run_.get("workload.model.layers").as<int>() : 0;
  const Token& t = seen_.count("decoder-first-pipeline-num-layers") ? seen_.at("decoder-first-pipeline-num-layers")
                                                                    : seen_.at("decoder-last-pipeline-num-layers");
  const int vpp = run_.has("workload.parallel.vpp") ? run_.get("workload.parallel.vpp").as<int>() : 1;
  if (pp < 3 || vpp != 1)
    fail(t, "uneven first and last stages need a pipeline of 3 or more stages without virtual stages here");
  const int first = run_.has("import.first") ? run_.get("import.first").as<int>() : -1;
  const int last = run_.has("import.last") ? run_.get("import.last").as<int>() : -1;
  const int given = (first >= 0 ? 1 : 0) + (last >= 0 ? 1 : 0);
  const int rest = layers - std::max(first, 0) - std::max(last, 0), middle = pp - given;
  if (rest <= 0 || rest % middle != 0)
    fail(t, fmt::format("{} layers less the first and last stages' do not divide over the other {} stages", layers,
                        middle));
  YAML::Node stages(YAML::NodeType::Sequence);
  for (int s = 0; s < pp; ++s)
    stages.push_back(s == 0 && first >= 0 ? first : s == pp - 1 && last >= 0 ? last : rest / middle);
  run_.set("workload.parallel.stage_layers", stages);
  run_.root.remove("import");
}

// Megatron-Core derives the virtual stages per rank from a layout's stage count (stages / pp).
void ArgReader::layout_stages()
{
  if (!run_.has("workload.parallel.pipeline_layout") || run_.has("workload.parallel.vpp"))
    return;
  const Token& t = seen_.at("pipeline-model-parallel-layout");
  PipelineLayout layout;
  try {
    layout = parse_pipeline_layout(t.text);
  } catch (const LayoutError& e) {
    fail(t, fmt::format("--pipeline-model-parallel-layout at character {}: {}", e.offset() + 1, e.what()));
  }
  const int pp = run_.has("workload.parallel.pp") ? run_.get("workload.parallel.pp").as<int>() : 1;
  if (layout.stages() % pp != 0)
    fail(t, fmt::format("--pipeline-model-parallel-layout has {} stages, not a multiple of the {} pipeline ranks",
                        layout.stages(), pp));
  if (layout.stages() > pp)
    run_.set("workload.parallel.vpp", layout.stages() / pp);
}

} // namespace cs::megatron_import
