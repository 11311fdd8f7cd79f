// torchtitan's flavors (torchtitan/models/*/__init__.py) and stage splits (torchtitan/parallelisms/pipelining_utils.py
// and pipeline_llama.py at 9dec370; torchtitan/distributed/pipeline_parallel.py since).
#include "sim/import/torchtitan_rules.hpp"

#include "base/input_error.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <stdexcept>

namespace cs {

const TorchtitanFlavor* torchtitan_flavor(const std::string& name, const std::string& flavor, std::string& known)
{
  static const std::map<std::pair<std::string, std::string>, TorchtitanFlavor> presets{
      {{"llama3", "8B"}, {"llama3-8b", false}},
      {{"llama3", "70B"}, {"llama3-70b", false}},
      {{"llama3", "405B"}, {"llama3.1-405b", false}},
      {{"qwen3", "8B"}, {"qwen3-8b", false}},
      {{"qwen3", "32B"}, {"qwen3-32b", false}},
      {{"qwen3", "30B-A3B"}, {"qwen3-30b-a3b", true}},
      {{"qwen3", "235B-A22B"}, {"qwen3-235b-a22b", true}},
      {{"deepseek_v3", "671B"}, {"deepseek-v3", true}},
      {{"deepseek_v3", "16B"}, {"deepseek-v2-lite", true}}};
  known.clear();
  for (const auto& [k, v] : presets)
    known += (known.empty() ? "" : ", ") + k.first + " " + k.second;
  const auto it = presets.find({name, flavor});
  return it == presets.end() ? nullptr : &it->second;
}

std::vector<int> torchtitan_even_split(int layers, int stages)
{
  std::vector<int> out(static_cast<std::size_t>(stages), layers / stages);
  int extra = layers % stages;
  for (int i = 1; i + 1 < stages && extra > 0; ++i, --extra)
    ++out[static_cast<std::size_t>(i)];
  out.back() += extra;
  return out;
}

std::vector<int> torchtitan_weighted_split(int layers, int stages, int first_less, int last_less)
{
  const int effective = layers + first_less + last_less;
  if (stages < 1 || stages > effective)
    return {};
  const int base = effective / stages, extra = effective % stages;
  if (base == 0 || first_less > base || last_less > base)
    return {};
  std::vector<int> out;
  for (int i = 0; i < stages; ++i)
    out.push_back(base + (i < extra ? 1 : 0) - (i == 0 ? first_less : 0) - (i == stages - 1 ? last_less : 0));
  if (stages == 1)
    out[0] = layers;
  return out;
}

std::vector<int> torchtitan_weighted_stages(int layers, int pp, int default_per_rank, TorchtitanWeights w,
                                            int layers_per_stage, const std::string& schedule)
{
  const int effective = layers + w.first + w.last;
  int count = pp * default_per_rank;
  if (layers_per_stage > 0) {
    count = (effective + layers_per_stage - 1) / layers_per_stage;
    const bool looped = default_per_rank > 1;
    if (count % pp != 0 || (looped ? count / pp < 2 : count / pp != 1))
      throw std::invalid_argument(
          fmt::format("{} layers a stage make {} stages of {} effective layers: not {} on {} pipeline ranks ({})",
                      layers_per_stage, count, effective, looped ? "two or more a rank" : "one a rank", pp, schedule));
  }
  auto stages = torchtitan_weighted_split(layers, count, w.first, w.last);
  if (stages.empty())
    throw std::invalid_argument(fmt::format(
        "torchtitan cannot split {} layers (and the ends' {} and {}) into {} stages", layers, w.first, w.last, count));
  return stages;
}

std::vector<int> torchtitan_split_points(const toml::node& points, int layers, const std::string& source)
{
  auto fail = [&](const toml::node& n, const std::string& message) {
    throw InputError(source, int(n.source().begin.line), int(n.source().begin.column), message);
  };
  const toml::array* list = points.as_array();
  if (!list)
    fail(points, "pipeline_parallel_split_points is a list of layer names such as \"layers.16\"");
  std::vector<int> stages;
  int previous = 0;
  for (const auto& point : *list) {
    const auto name = point.value<std::string>();
    int first = -1;
    if (name && name->rfind("layers.", 0) == 0 && name->size() > 7 && name->size() < 17 &&
        name->find_first_not_of("0123456789", 7) == std::string::npos)
      first = std::stoi(name->substr(7));
    if (first <= previous || first >= layers)
      fail(point, fmt::format("a split point is \"layers.N\", N rising from 1 to {} (the model's last layer), not {}",
                              layers - 1, name ? "'" + *name + "'" : std::string("a non-string")));
    stages.push_back(first - previous);
    previous = first;
  }
  stages.push_back(layers - previous);
  return stages;
}

std::vector<std::string> torchtitan_list(const std::string& list)
{
  std::vector<std::string> out;
  for (std::size_t from = 0; from <= list.size();) {
    const std::size_t comma = std::min(list.find(',', from), list.size());
    std::string name = list.substr(from, comma - from);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    out.push_back(name);
    from = comma + 1;
  }
  return out;
}

} // namespace cs
