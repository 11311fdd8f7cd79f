// How torchtitan cuts a pipelined run (sim/import/torchtitan_reader.hpp): a rank's local batch into microbatches and
// its layers into stages by the rules of the release its layout belongs to, and per-layer checkpointing over a stage.
#include "sim/import/torchtitan_reader.hpp"

#include "models/transformer/model_params.hpp"
#include "sim/import/torchtitan_rules.hpp"

#include <yaml-cpp/yaml.h>

namespace cs {

// How torchtitan cuts a pipelined rank's local batch into microbatches and its layers into stages, by the rules of
// the release its layout belongs to (sim/import/torchtitan_rules.hpp; docs/import.md). Without a pipeline the local
// batch is one microbatch. A 2024-layout file without a count runs as many microbatches as pipeline ranks (9dec370).
void TorchtitanReader::pipeline(std::optional<std::int64_t> local)
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

void TorchtitanReader::microbatches(const Pipeline& p, std::optional<std::int64_t> local)
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

void TorchtitanReader::stages(const Pipeline& p)
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
std::vector<int> TorchtitanReader::weighted_stages(const Pipeline& p, int layers)
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
void TorchtitanReader::layer_checkpointing(const toml::node& option, const std::string& every)
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

} // namespace cs
