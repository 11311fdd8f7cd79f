// The reader behind read_torchtitan_toml (sim/import/torchtitan_toml.hpp): one torchtitan TOML's tables read into
// scenario keys, its model, parallelism and training in torchtitan_toml.cpp, its pipeline cut and per-layer
// checkpointing in torchtitan_pipeline.cpp.
#pragma once

#include "base/input_error.hpp"
#include "sim/import/imported_run.hpp"

#include <cstdint>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <toml++/toml.h>
#include <vector>

namespace cs {

/** Where a value a launch command set on top of the TOML came from: its word in the command (for file:line:col). */
struct PlacedOverride {
  std::string source;
  int line = 1, column = 1;
};
using OverridePlaces = std::map<const toml::node*, PlacedOverride>;

/** Reads one torchtitan TOML into `run`: each key where its release's layout keeps it, the keys it used remembered so
 *  that the rest are named in warnings. Values that cannot be read throw InputError at their line and column. */
class TorchtitanReader {
public:
  TorchtitanReader(const toml::table& doc, const std::string& source, ImportedRun& run,
                   const OverridePlaces* placed = nullptr)
      : doc_(doc), source_(source), run_(run), placed_(placed)
  {}

  [[noreturn]] void fail(const toml::node& n, const std::string& message) const
  {
    if (placed_)
      if (const auto it = placed_->find(&n); it != placed_->end())
        throw InputError(it->second.source, it->second.line, it->second.column, message);
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

  // Whether [model] converters (a string of comma-separated names, or a list of them) names `kind`, alone or as the
  // last part of a dotted name (torchtitan's later "quantize.linear.float8").
  bool converter(const std::string& kind);

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
  void float8_training();
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
  const OverridePlaces* placed_; // values a launch command set, where it set them
  std::set<std::string> used_;
  std::vector<std::string> approximated_;
  std::vector<std::string> no_effect_; // read, but torchtitan itself ignores them in this configuration
  bool moe_ = false;                   // the flavor's preset routes its tokens to experts
  bool compiled_ = false;              // torch.compile: the fused kernels of the fsdp profile, else torch-eager's
};

/** Parses torchtitan configuration `text` from file `source`; a TOML syntax error throws InputError at its place. */
toml::table parse_torchtitan_toml(const std::string& text, const std::string& source);

/** The scenario keys of torchtitan configuration `doc` from file `source`, values a launch command set on it placed
 *  at their words (`placed`, may be null). */
ImportedRun read_torchtitan_table(const toml::table& doc, const std::string& source, const OverridePlaces* placed);

} // namespace cs
