// torchtitan's launch lines as its README and benchmark pages give them: torchrun (or run_train.sh with CONFIG_FILE and
// NGPU) running train.py on --job.config_file, followed by --section.key overrides that torchtitan's config manager
// applies on top of the TOML.
#include "sim/import/torchtitan_launch.hpp"

#include "base/input_error.hpp"
#include "base/json_input.hpp"
#include "sim/import/shell_words.hpp"
#include "sim/import/torchtitan_reader.hpp"
#include "sim/import/torchtitan_rules.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>

namespace cs {
namespace {

// An environment assignment before the command (CONFIG_FILE=..., NGPU=8): its name, or "".
std::string assigned_name(const std::string& word)
{
  const std::size_t eq = word.find('=');
  if (eq == 0 || eq == std::string::npos)
    return "";
  for (std::size_t i = 0; i < eq; ++i)
    if (!(std::isupper(static_cast<unsigned char>(word[i])) || std::isdigit(static_cast<unsigned char>(word[i])) ||
          word[i] == '_'))
      return "";
  return word.substr(0, eq);
}

struct Override {
  std::string path; // section.key, hyphens read as underscores
  ShellWord flag;
  std::optional<ShellWord> value;
};

// What the command says: the configuration, the GPUs, the overrides, and the launcher's own settings.
struct Launch {
  std::optional<ShellWord> config, nnodes, nproc;
  bool run_train = false; // torchtitan's run_train.sh: one node of NGPU GPUs, 8 unless set
  std::vector<Override> overrides;
  std::vector<std::string> launcher;
};

Launch scan(const std::vector<ShellWord>& words, const std::string& source)
{
  Launch l;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const ShellWord& w = words[i];
    if (const std::string env = assigned_name(w.text); !env.empty()) {
      const ShellWord value{w.text.substr(env.size() + 1), w.line, w.column + int(env.size()) + 1};
      if (env == "CONFIG_FILE")
        l.config = value;
      else if (env == "NGPU")
        l.nproc = value;
      else
        l.launcher.push_back(env);
      continue;
    }
    if (w.text.rfind("--", 0) != 0 || w.text.size() == 2) { // the launcher, the script and their positional words
      l.run_train = l.run_train || std::filesystem::path(w.text).filename() == "run_train.sh";
      continue;
    }
    std::string name = w.text.substr(2);
    std::optional<ShellWord> value;
    if (const std::size_t eq = name.find('='); eq != std::string::npos) {
      value = ShellWord{name.substr(eq + 1), w.line, w.column + 3 + int(eq)};
      name.resize(eq);
    } else if (i + 1 < words.size() && words[i + 1].text.rfind("--", 0) != 0) {
      value = words[++i];
    }
    std::replace(name.begin(), name.end(), '-', '_');
    if (name == "job.config_file") {
      if (!value)
        throw InputError(source, w.line, w.column, "--job.config_file needs the configuration's path");
      l.config = value;
    } else if (name == "nnodes") {
      l.nnodes = value;
    } else if (name == "nproc_per_node") {
      l.nproc = value;
    } else if (name.find('.') != std::string::npos) {
      l.overrides.push_back({name, w, value});
    } else {
      l.launcher.push_back("--" + name);
    }
  }
  return l;
}

// The TOML the command names: as given (relative to where clustersim runs), beside the command's file, or its file
// name beside the command's file (the repository's path, the file copied next to the command).
std::string find_config(const ShellWord& w, const std::string& source)
{
  namespace fs = std::filesystem;
  const fs::path given(w.text), here = fs::path(source).parent_path();
  std::error_code ec;
  for (const fs::path& p : {given, here / given, here / given.filename()})
    if (!p.empty() && fs::is_regular_file(p, ec))
      return p.string();
  throw InputError(source, w.line, w.column,
                   fmt::format("cannot find the torchtitan configuration '{}' (looked for it as given, beside {}, and "
                               "for its file name there)",
                               w.text, source));
}

std::optional<std::int64_t> whole(const std::string& s)
{
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty() ? std::optional(v) : std::nullopt;
}

std::optional<double> number(const std::string& s)
{
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty() ? std::optional(v) : std::nullopt;
}

std::optional<bool> boolean(const std::string& s)
{
  if (s == "true" || s == "True")
    return true;
  if (s == "false" || s == "False")
    return false;
  return std::nullopt;
}

toml::array names(const std::string& list)
{
  toml::array out;
  for (const std::string& name : torchtitan_list(list))
    out.push_back(name);
  return out;
}

// Sets one override on the configuration, typed as the TOML types the key (or, for a key it lacks, as the value
// reads), and notes where the command set it.
void apply(toml::table& doc, const Override& o, const std::string& source, OverridePlaces& placed)
{
  const ShellWord& where = o.value ? *o.value : o.flag;
  auto fail = [&](const ShellWord& at, const std::string& message) {
    throw InputError(source, at.line, at.column, message);
  };
  std::vector<std::string> parts;
  for (std::size_t from = 0; from <= o.path.size();) {
    const std::size_t dot = std::min(o.path.find('.', from), o.path.size());
    parts.push_back(o.path.substr(from, dot - from));
    from = dot + 1;
  }
  if (std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); }))
    fail(o.flag, fmt::format("--{} is not a --section.key override", o.path));
  toml::table* table = &doc;
  for (std::size_t k = 0; k + 1 < parts.size(); ++k) {
    if (!table->contains(parts[k]))
      table->insert(parts[k], toml::table{});
    table = table->get(parts[k])->as_table();
    if (!table)
      fail(o.flag, fmt::format("--{}: {} is not a table of the configuration", o.path, parts[k]));
  }
  std::string key = parts.back();
  // A negated switch (tyro's --section.no-key): false for a true-or-false key the TOML has.
  bool negated = false;
  if (!o.value && key.rfind("no_", 0) == 0 && !table->get(key))
    if (const toml::node* plain = table->get(key.substr(3)); plain && plain->is_boolean()) {
      key = key.substr(3);
      negated = true;
    }
  const toml::node* old = table->get(key);
  if (old && old->is_table())
    fail(o.flag, fmt::format("--{} is a table of the configuration, not a value", o.path));
  auto typed = [&](const char* what, auto parsed) {
    if (!parsed)
      fail(where, fmt::format("--{} takes {}, not '{}'", o.path, what, o.value->text));
    table->insert_or_assign(key, *parsed);
  };
  if (old) { // the stale pointers of a value set twice
    placed.erase(old);
    if (const toml::array* a = old->as_array())
      for (const auto& e : *a)
        placed.erase(&e);
  }
  if (!o.value) {
    if (old && !old->is_boolean())
      fail(o.flag, fmt::format("--{} needs a value", o.path));
    table->insert_or_assign(key, !negated);
  } else if (const std::string& v = o.value->text; old && old->is_boolean()) {
    typed("true or false", boolean(v));
  } else if (old && old->is_integer()) {
    typed("a whole number", whole(v));
  } else if (old && old->is_floating_point()) {
    typed("a number", number(v));
  } else if (old && old->is_array()) {
    table->insert_or_assign(key, names(v));
  } else if (old) {
    table->insert_or_assign(key, v);
  } else if (const auto b = boolean(v)) {
    table->insert_or_assign(key, *b);
  } else if (const auto i = whole(v)) {
    table->insert_or_assign(key, *i);
  } else if (const auto d = number(v)) {
    table->insert_or_assign(key, *d);
  } else {
    table->insert_or_assign(key, v);
  }
  const toml::node* set = table->get(key);
  placed[set] = {source, where.line, where.column};
  if (const toml::array* a = set->as_array())
    for (const auto& e : *a)
      placed[&e] = {source, where.line, where.column};
}

// A GPU count the command gives as a number; a shell variable ($NUM_NODES) gives none.
std::optional<int> count(const std::optional<ShellWord>& w, const std::string& source, const char* what)
{
  if (!w || w->text.rfind('$', 0) == 0)
    return std::nullopt;
  const auto v = whole(w->text);
  if (!v || *v <= 0 || *v > (1 << 20))
    throw InputError(source, w->line, w->column, fmt::format("{} is a positive whole number, not '{}'", what, w->text));
  return int(*v);
}

} // namespace

bool looks_like_torchtitan_launch(const std::string& text)
{
  return text.find("--job.config_file") != std::string::npos || text.find("--job.config-file") != std::string::npos ||
         text.find("CONFIG_FILE=") != std::string::npos;
}

namespace {

Launch scan_launch(const std::string& text, const std::string& source)
{
  Launch l = scan(shell_words(text, source), source);
  if (!l.config)
    throw InputError(source, 1, 1,
                     "a torchtitan launch names its configuration: --job.config_file PATH or CONFIG_FILE=");
  return l;
}

ImportedRun read_launch(const Launch& l, const std::string& source, const std::string& config_text,
                        const std::string& config)
{
  toml::table doc = parse_torchtitan_toml(config_text, config);
  OverridePlaces placed;
  for (const Override& o : l.overrides)
    apply(doc, o, source, placed);
  ImportedRun run = read_torchtitan_table(doc, config, &placed);
  const auto nodes = count(l.nnodes, source, "--nnodes");
  auto per_node = count(l.nproc, source, "the GPUs a node");
  if (!l.nproc && l.run_train)
    per_node = 8; // run_train.sh's NGPU when unset
  if (per_node) {
    run.gpus_per_node = *per_node;
    if (nodes || !l.nnodes) // run_train.sh and a bare torchrun run one node
      run.gpus = *per_node * nodes.value_or(1);
  }
  for (const auto& w : {l.nnodes, l.nproc})
    if (w && w->text.rfind('$', 0) == 0)
      run.warn("set by the shell, so not read: " + w->text + " (give --gpus)");
  if (!l.launcher.empty())
    run.warn(fmt::format("read but not modelled (the launcher's settings): {}", fmt::join(l.launcher, ", ")));
  return run;
}

} // namespace

ImportedRun read_torchtitan_launch(const std::string& text, const std::string& source)
{
  const Launch l = scan_launch(text, source);
  const std::string config = find_config(*l.config, source);
  return read_launch(l, source, read_text_file(config, "configuration"), config);
}

ImportedRun read_torchtitan_launch(const std::string& text, const std::string& source, const std::string& config_text,
                                   const std::string& config_path)
{
  return read_launch(scan_launch(text, source), source, config_text, config_path);
}

} // namespace cs
