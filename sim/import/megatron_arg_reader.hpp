// The reading of one Megatron-LM argument list (internal to sim/import): its tokens, the flags seen, what each sets
// and the rules that tie flags together, split over megatron_args.cpp (the reading) and megatron_arg_rules.cpp.
#pragma once

#include "sim/import/imported_run.hpp"
#include "sim/import/shell_words.hpp"

#include "base/input_error.hpp"

#include <charconv>
#include <fmt/format.h>
#include <map>
#include <string>
#include <vector>

namespace cs::megatron_import {

using Token = ShellWord;

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
  void apply_tp_overlap_cfg(const Token& value);
  void read_tp_overlap_file(const std::string& path);
  void resolve_window();
  void resolve_dispatcher();
  void resolve_sharding();
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
  bool rope_unfused_ = false; // a rotary variant Megatron does not fuse (yarn, mrope)
  int flex_sms_ = 0;
  int nodes_ = 0, per_node_ = 0;
};

} // namespace cs::megatron_import
