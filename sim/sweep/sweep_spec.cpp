#include "sim/sweep/sweep_spec.hpp"

#include "base/input_error.hpp"
#include "base/yaml_reader.hpp"

#include <fmt/format.h>

namespace cs {
namespace {

constexpr std::size_t kMaxVariants = 100000;

[[noreturn]] void command_line_error(const std::string& message) { throw InputError("<command line>", 1, 1, message); }

std::vector<std::string> split_values(const std::string& text)
{
  // Commas inside brackets or braces belong to a YAML value ("[1, 2]"), not to the list of values.
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[' || c == '{')
      ++depth;
    if (c == ']' || c == '}')
      --depth;
    if (c == ',' && depth == 0) {
      out.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  out.push_back(current);
  return out;
}

} // namespace

void add_axis_flags(SweepSpec& spec, const std::vector<std::string>& flags)
{
  for (const auto& flag : flags) {
    const auto eq = flag.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size())
      command_line_error("--axis " + flag + ": expected key=value1,value2,...");
    SweepAxis axis{flag.substr(0, eq), split_values(flag.substr(eq + 1))};
    for (const auto& v : axis.values)
      if (v.empty())
        command_line_error("--axis " + flag + ": an empty value");
    for (const auto& a : spec.axes)
      if (a.key == axis.key)
        command_line_error("--axis " + flag + ": the axis '" + axis.key + "' is given twice");
    spec.axes.push_back(std::move(axis));
  }
}

void read_sweep_block(SweepSpec& spec, const YAML::Node& block, const std::string& file)
{
  if (!block.IsDefined() || block.IsNull())
    return;
  auto fail = [&](const YAML::Node& n, const std::string& message) {
    const YAML::Mark m = n.Mark();
    throw InputError(file, m.is_null() ? 1 : m.line + 1, m.is_null() ? 1 : m.column + 1, message);
  };
  if (!block.IsMap())
    fail(block, "sweep must be a map: {axes: {key: [values]}, mode: cross | zip, seeds: N}");
  for (const auto& kv : block) {
    const std::string key = kv.first.Scalar();
    if (key == "axes") {
      if (!kv.second.IsMap())
        fail(kv.second, "sweep.axes must map scenario keys to lists of values");
      for (const auto& axis : kv.second) {
        if (!axis.second.IsSequence() || axis.second.size() == 0)
          fail(axis.second, "sweep.axes." + axis.first.Scalar() + " must be a non-empty list of values");
        SweepAxis a{axis.first.Scalar(), {}};
        for (const auto& v : axis.second) {
          YAML::Node value = YAML::Clone(v); // a value given by --set carries its override tag: not a label
          strip_override_tags(value);
          YAML::Emitter e;
          e << YAML::Flow << value;
          a.values.push_back(e.c_str());
        }
        spec.axes.push_back(std::move(a));
      }
    } else if (key == "mode") {
      const std::string mode = kv.second.IsScalar() ? kv.second.Scalar() : "";
      if (mode != "cross" && mode != "zip")
        fail(kv.second, "sweep.mode must be cross or zip");
      spec.zip = mode == "zip";
    } else if (key == "seeds") {
      long long n = 0;
      try {
        n = kv.second.as<long long>();
      } catch (const YAML::Exception&) {
        n = 0;
      }
      if (n < 1 || n > 10000)
        fail(kv.second, "sweep.seeds must be a whole number from 1 to 10000");
      spec.seeds = static_cast<int>(n);
    } else {
      fail(kv.first, "unknown key '" + key + "' in sweep (known keys: axes, mode, seeds)");
    }
  }
}

std::vector<SweepVariant> sweep_variants(const SweepSpec& spec, long long base_seed)
{
  std::vector<std::vector<std::pair<std::string, std::string>>> combos{{}};
  if (spec.zip && !spec.axes.empty()) {
    const std::size_t n = spec.axes.front().values.size();
    for (const auto& a : spec.axes)
      if (a.values.size() != n)
        command_line_error(fmt::format("zipped axes must have the same number of values ('{}' has {}, '{}' {})",
                                       spec.axes.front().key, n, a.key, a.values.size()));
    combos.assign(n, {});
    for (std::size_t i = 0; i < n; ++i)
      for (const auto& a : spec.axes)
        combos[i].emplace_back(a.key, a.values[i]);
  } else {
    for (const auto& a : spec.axes) {
      if (combos.size() * a.values.size() > kMaxVariants)
        command_line_error(fmt::format("the sweep would have more than {} variants", kMaxVariants));
      std::vector<std::vector<std::pair<std::string, std::string>>> next;
      for (const auto& c : combos)
        for (const auto& v : a.values) {
          next.push_back(c);
          next.back().emplace_back(a.key, v);
        }
      combos = std::move(next);
    }
  }
  if (combos.size() * static_cast<std::size_t>(spec.seeds) > kMaxVariants)
    command_line_error(fmt::format("the sweep would have more than {} variants", kMaxVariants));
  std::vector<SweepVariant> out;
  for (const auto& c : combos)
    for (int s = 0; s < spec.seeds; ++s) {
      SweepVariant v{"", out.size(), c, base_seed + s, "", "", ""};
      for (const auto& [k, val] : c)
        v.id += k + "=" + val + ",";
      v.id += "seed=" + std::to_string(v.seed);
      out.push_back(std::move(v));
    }
  return out;
}

std::string resume_key(const SweepVariant& v)
{
  return v.id + '\x1f' + v.backend + '\x1f' + v.overrides + '\x1f' + v.scenario_digest;
}

} // namespace cs
