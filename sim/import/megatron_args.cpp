// Megatron-LM's arguments (megatron/training/arguments.py) as its documentation and pretrain_gpt.py spell them; the
// ones that shape a step are mapped to scenario keys, the ones that do not (learning rate, data, checkpoint paths,
// logging) are named in one warning, and unknown ones in another.
#include "sim/import/megatron_args.hpp"

#include "models/parallel/pipeline_layout.hpp"

#include "sim/import/megatron_flags.hpp"

#include "base/input_error.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <map>

namespace cs {

namespace {

struct Token {
  std::string text;
  int line = 1, column = 1;
};

// Shell-like words: whitespace separates, a backslash before a newline joins lines, # starts a comment, quotes group.
std::vector<Token> words(const std::string& text, const std::string& source)
{
  std::vector<Token> out;
  int line = 1, column = 1;
  Token cur;
  bool in_word = false;
  char quote = 0;
  auto flush = [&] {
    if (in_word)
      out.push_back(cur);
    cur = Token{};
    in_word = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (!in_word && !quote && ch == '#') { // a comment to the end of the line
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
      ++column;
      continue;
    }
    if (!quote && ch == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      flush();
      ++i;
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
        ++i;
      ++line;
      column = 1;
      continue;
    }
    if (quote) {
      if (ch == quote)
        quote = 0;
      else
        cur.text += ch;
    } else if (ch == '"' || ch == '\'') {
      if (!in_word) {
        in_word = true;
        cur.line = line;
        cur.column = column;
      }
      quote = ch;
    } else if (std::isspace(static_cast<unsigned char>(ch))) {
      flush();
    } else {
      if (!in_word) {
        in_word = true;
        cur.line = line;
        cur.column = column;
      }
      cur.text += ch;
    }
    if (ch == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  if (quote)
    throw InputError(source, cur.line, cur.column, "unterminated quote");
  flush();
  return out;
}

class ArgReader {
public:
  ArgReader(const std::string& source, ImportedRun& run) : source_(source), run_(run) {}

  [[noreturn]] void fail(const Token& t, const std::string& message) const
  {
    throw InputError(source_, t.line, t.column, message);
  }
  int positive_int(const Token& flag, const Token& v) const
  {
    int out = 0;
    const char* end = v.text.data() + v.text.size();
    const auto [p, ec] = std::from_chars(v.text.data(), end, out);
    if (ec != std::errc() || p != end || out <= 0)
      fail(v, fmt::format("--{} takes a positive whole number, not '{}'", flag.text, v.text));
    return out;
  }
  double fraction(const Token& flag, const Token& v) const
  {
    double out = 0;
    const char* end = v.text.data() + v.text.size();
    const auto [p, ec] = std::from_chars(v.text.data(), end, out);
    if (ec != std::errc() || p != end || !(out >= 0 && out < 1))
      fail(v, fmt::format("--{} takes a number in [0, 1), not '{}'", flag.text, v.text));
    return out;
  }

  void read(const std::vector<Token>& tokens);

private:
  void apply(const Token& flag, const std::vector<Token>& values);
  void apply_moe(const Token& flag, const Token& value);
  void apply_dispatcher(const Token& flag, const std::vector<Token>& values);
  void apply_window(const Token& flag, const Token& value);
  void resolve_window();
  void resolve_dispatcher();
  void uneven_stages();
  void layout_stages();
  void finish();

  std::string source_;
  ImportedRun& run_;
  std::map<std::string, Token> seen_; // flag (without dashes) -> its first value, for the cross-flag rules
  std::vector<std::string> ignored_, unknown_;
  // Megatron's dispatcher flags, resolved together in finish(): the flex backend counts only with the flex type.
  std::string dispatcher_type_, flex_backend_;
  // Sliding-window attention: --window-size (left, right), --window-attn-skip-freq, --softmax-type; read in finish().
  int window_left_ = -1, window_skip_ = 0;
  std::string softmax_type_;
  // --cross-entropy-loss-fusion and its --cross-entropy-fusion-impl (native by default), resolved in finish().
  bool cross_entropy_fusion_ = false;
  std::string cross_entropy_impl_;
  int flex_sms_ = 0;
  int nodes_ = 0, per_node_ = 0;
};

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
          if (name != "recompute-modules")
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
      } else if ((v == "false" || v == "False") && switch_flags().count("no-" + name)) {
        name = "no-" + name; // a field on by default, turned off
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
  resolve_window();
  if (cross_entropy_fusion_)
    run_.set("workload.framework.cross_entropy_fusion", cross_entropy_impl_.empty() ? "native" : cross_entropy_impl_);
  else if (!cross_entropy_impl_.empty())
    ignored_.push_back("--cross-entropy-fusion-impl " + cross_entropy_impl_ +
                       " (read only with --cross-entropy-loss-fusion)");
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

} // namespace

ImportedRun read_megatron_args(const std::string& text, const std::string& source)
{
  ImportedRun run;
  run.set("workload.kind", "transformer-training");
  ArgReader reader(source, run);
  reader.read(words(text, source));
  return run;
}

} // namespace cs
