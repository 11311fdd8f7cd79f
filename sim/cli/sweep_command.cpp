// `clustersim sweep`: runs a scenario's variants (axes crossed or zipped, times seeds) as child `clustersim run`
// processes, --jobs at a time, and writes results.jsonl, results.csv and a summary grouped by an axis. Resumable:
// variants already in results.jsonl are not run again.
#include "sim/cli/command.hpp"
#include "sim/cli/output_files.hpp"

#include "base/input_error.hpp"
#include "core/common_metrics.hpp"
#include "sim/goodput/goodput_metrics.hpp"
#include "sim/report/gnuplot.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/sweep/sweep_plot.hpp"
#include "sim/sweep/sweep_results.hpp"

#include "base/json_input.hpp"
#include "core/backend.hpp"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>

#include <cstdint>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iostream>
#include <map>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace cs {
namespace {

struct SweepArgs {
  std::string scenario, out_dir, by, metric, backend;
  std::vector<std::string> axes, sets;
  int seeds = 0, jobs = 1;
  std::string shard; // "I/N": run the variants whose index is I modulo N (Slurm arrays; merge the folders after)
  bool zip = false;
  double goodput_days = 0; // > 0: each variant runs `clustersim goodput --days` instead of `run`
};

// FNV-1a, 64 bits: a stable digest of the scenario's bytes (std::hash may differ between builds).
std::uint64_t fnv1a64(const std::string& bytes)
{
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : bytes)
    h = (h ^ c) * 1099511628211ULL;
  return h;
}

// Starts `clustersim run` for one variant; its stdout is discarded and its stderr kept in runs/<n>.err.
pid_t spawn_run(const SweepArgs& a, const SweepVariant& v, const fs::path& run_dir)
{
  std::vector<std::string> args{fs::read_symlink("/proc/self/exe").string(),
                                "run",
                                a.scenario,
                                "--quiet",
                                "--out",
                                run_dir.string(),
                                "--seed",
                                std::to_string(v.seed)};
  if (a.goodput_days > 0) // the long run: its own seeds draw the failures; the variant's seed is the scenario's
    args = {args[0],
            "goodput",
            a.scenario,
            "--days",
            fmt::format("{:.17g}", a.goodput_days),
            "--out",
            run_dir.string(),
            "--set",
            "seed=" + std::to_string(v.seed)};
  if (!a.backend.empty() && a.goodput_days > 0)
    args.insert(args.end(), {"--set", "backend=" + a.backend});
  else if (!a.backend.empty())
    args.insert(args.end(), {"--backend", a.backend});
  for (const auto& s : a.sets)
    args.insert(args.end(), {"--set", s});
  for (const auto& [k, val] : v.settings)
    args.insert(args.end(), {"--set", k + "=" + val});
  std::vector<char*> argv;
  for (auto& s : args)
    argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const std::string err = run_dir.string() + ".err";
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  if (rc != 0)
    throw std::runtime_error("cannot start " + args[0]);
  return pid;
}

SweepRow collect(const SweepArgs& a, const SweepVariant& v, const fs::path& run_dir, int status)
{
  SweepRow row;
  row.variant = v;
  row.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (row.ok && a.goodput_days > 0) {
    std::ifstream in(run_dir / "goodput.json");
    for (const auto& [name, value] : goodput_metrics(nlohmann::json::parse(in, nullptr, false)))
      row.metrics[name] = value;
  } else if (row.ok) {
    std::ifstream in(run_dir / "report.json");
    read_report_metrics(nlohmann::json::parse(in, nullptr, false), row);
  } else {
    std::ifstream in(run_dir.string() + ".err");
    std::string line;
    std::getline(in, line);
    row.error = !line.empty()         ? line
                : WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                      : fmt::format("exit {}", WEXITSTATUS(status));
  }
  return row;
}

std::map<std::string, SweepRow> previous_rows(const fs::path& jsonl)
{
  std::map<std::string, SweepRow> rows;
  std::ifstream in(jsonl);
  for (std::string line; std::getline(in, line);) {
    SweepRow r;
    if (row_from_json(line, r))
      rows[resume_key(r.variant)] = r;
  }
  return rows;
}

// Runs the pending variants, `jobs` at a time, appending each finished row to results.jsonl (so an interrupted
// sweep resumes where it stopped) and printing progress on stderr.
void run_pending(const SweepArgs& a, const std::vector<SweepVariant>& variants, const std::vector<std::size_t>& pending,
                 const fs::path& out, std::map<std::string, SweepRow>& rows)
{
  std::ofstream log(out / "results.jsonl", std::ios::app);
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0, finished = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  while (next < pending.size() || !running.empty()) {
    while (next < pending.size() && running.size() < static_cast<std::size_t>(a.jobs)) {
      const std::size_t i = pending[next++];
      running[spawn_run(a, variants[i], out / "runs" / std::to_string(variants[i].index))] = i;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    auto it = running.find(pid);
    if (pid < 0 || it == running.end())
      continue;
    const std::size_t i = it->second;
    running.erase(it);
    SweepRow row = collect(a, variants[i], out / "runs" / std::to_string(variants[i].index), status);
    failed += row.ok ? 0 : 1;
    log << row_to_json(row).dump() << "\n" << std::flush;
    rows[resume_key(row.variant)] = std::move(row);
    ++finished;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string line = fmt::format("sweep: {}/{} variants run{}, {:.0f} s, about {:.0f} s left", finished,
                                         pending.size(), failed ? fmt::format(" ({} failed)", failed) : "", elapsed,
                                         elapsed / finished * (pending.size() - finished));
    std::cerr << (terminal ? "\r\033[K" + line : line + "\n") << std::flush;
  }
  if (terminal && !pending.empty())
    std::cerr << "\r\033[K" << std::flush;
}

// "I/N" -> (I, N); "" -> (0, 1).
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text)
{
  if (text.empty())
    return {0, 1};
  std::size_t i = 0, n = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%zu%c%zu%c", &i, &slash, &n, &extra) != 3 || slash != '/' || n == 0 || i >= n ||
      n > 100000)
    throw InputError("<command line>", 1, 1, "--shard " + text + ": expected I/N with 0 <= I < N");
  return {i, n};
}

// The rank and size of this process when mpirun (OpenMPI, or an MPICH-style PMI) started it, and the job's id.
struct MpiRank {
  int rank = 0, size = 1;
  std::string job;
};

MpiRank mpi_rank()
{
  auto env = [](const char* name) { return std::getenv(name) ? std::string(std::getenv(name)) : std::string(); };
  MpiRank m;
  std::string rank = env("OMPI_COMM_WORLD_RANK"), size = env("OMPI_COMM_WORLD_SIZE");
  if (rank.empty()) {
    rank = env("PMI_RANK");
    size = env("PMI_SIZE");
  }
  if (rank.empty() || size.empty())
    return m;
  m.rank = std::atoi(rank.c_str());
  m.size = std::max(1, std::atoi(size.c_str()));
  m.job = env("PMIX_NAMESPACE").empty() ? env("PMI_KVSNAME") : env("PMIX_NAMESPACE");
  return m;
}

// Under mpirun every rank runs its shard into <out>/mpi/<rank>/ and leaves a marker holding the job's id; rank 0
// waits for every rank's marker of this job, then gathers their rows (the ranks need no MPI library).
std::map<std::string, SweepRow> gather_ranks(const fs::path& out, const MpiRank& mpi)
{
  std::map<std::string, SweepRow> rows;
  for (int r = 0; r < mpi.size; ++r) {
    const fs::path marker = out / "mpi" / std::to_string(r) / ".done";
    for (;;) {
      std::ifstream in(marker);
      std::string job;
      if (in && std::getline(in, job) && job == mpi.job)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (auto& [key, row] : previous_rows(out / "mpi" / std::to_string(r) / "results.jsonl"))
      rows[key] = std::move(row);
  }
  return rows;
}

// The summary on stdout: the metric grouped by an axis, then the failures.
void print_summary(const std::vector<SweepRow>& ordered, const std::vector<std::string>& axes, const SweepArgs& a,
                   const fs::path& out)
{
  std::string metric = a.metric;
  if (metric.empty())
    for (const auto& r : ordered)
      if (r.ok) {
        const std::string preferred(a.goodput_days > 0 ? metric::ettr.name : metric::iteration_time_s.name);
        metric = r.metrics.count(preferred) ? preferred : r.metrics.begin()->first;
        break;
      }
  if (!metric.empty())
    std::cout << summary_table(ordered, a.by.empty() && !axes.empty() ? axes.front() : a.by, metric);
  for (const auto& r : ordered)
    if (!r.ok)
      std::cout << "  failed " << r.variant.id << ": " << r.error << "\n";
  std::cout << fmt::format("  outputs   {}/ (results.csv, results.jsonl, runs/)\n", out.string());
}

// What every variant shares, which a resumed sweep must match to reuse a row: backend, overrides, scenario bytes.
void set_shared_settings(const SweepArgs& a, const Scenario& s, std::vector<SweepVariant>& variants)
{
  const std::string digest = fmt::format("{:016x}", fnv1a64(read_text_file(a.scenario, "scenario")));
  std::string overrides;
  for (const auto& set : a.sets)
    overrides += (overrides.empty() ? "" : " ") + set;
  if (a.goodput_days > 0)
    overrides += fmt::format("{}--goodput-days {:.17g}", overrides.empty() ? "" : " ", a.goodput_days);
  for (auto& v : variants) {
    v.backend = a.backend.empty() ? backend_name(s.backend) : a.backend;
    v.overrides = overrides;
    v.scenario_digest = digest;
  }
}

int sweep(const SweepArgs& a)
{
  const Scenario s = load_scenario(a.scenario, a.sets);
  check_scenario(s);
  SweepSpec spec;
  read_sweep_block(spec, s.sweep, a.scenario);
  add_axis_flags(spec, a.axes);
  if (a.zip)
    spec.zip = true;
  if (a.seeds > 0)
    spec.seeds = a.seeds;
  std::vector<SweepVariant> variants = sweep_variants(spec, s.seed);
  set_shared_settings(a, s, variants);
  std::vector<std::string> axes;
  for (const auto& axis : spec.axes)
    axes.push_back(axis.key);
  if (!a.by.empty() && std::find(axes.begin(), axes.end(), a.by) == axes.end())
    throw InputError("<command line>", 1, 1, "--by " + a.by + ": not an axis of this sweep");
  const fs::path out = a.out_dir.empty() ? fs::path("out") / (s.name + "-sweep") : fs::path(a.out_dir);
  auto [shard, shards] = parse_shard(a.shard);
  const MpiRank mpi = mpi_rank();
  if (mpi.size > 1 && !a.shard.empty())
    throw InputError("<command line>", 1, 1, "--shard under mpirun: the ranks are the shards");
  fs::path dir = out;
  if (mpi.size > 1) {
    shard = static_cast<std::size_t>(mpi.rank);
    shards = static_cast<std::size_t>(mpi.size);
    dir = out / "mpi" / std::to_string(mpi.rank);
  }
  check_output_dir(dir.string());
  fs::create_directories(dir / "runs");
  fs::remove(dir / ".done");
  std::map<std::string, SweepRow> rows = previous_rows(dir / "results.jsonl");
  std::vector<SweepVariant> mine;
  for (const auto& v : variants)
    if (v.index % shards == shard)
      mine.push_back(v);
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (!rows.count(resume_key(mine[i])))
      pending.push_back(i);
  if (mpi.rank == 0)
    std::cout << fmt::format(
        "clustersim sweep for {}: {} variants ({} axes{}, {} seed{}){}, {} already done, {} jobs\n", s.name,
        mine.size(), axes.size(), spec.zip ? " zipped" : "", spec.seeds, spec.seeds == 1 ? "" : "s",
        mpi.size > 1 ? fmt::format(", rank 0 of {} MPI ranks", mpi.size)
        : shards > 1 ? fmt::format(", shard {} of {}", shard, shards)
                     : "",
        mine.size() - pending.size(), a.jobs);
  run_pending(a, mine, pending, dir, rows);
  // Rewritten in the variants' order, so the files do not depend on which job finished first.
  auto write_results = [&](const fs::path& folder, const std::vector<SweepVariant>& which) {
    std::vector<SweepRow> ordered;
    std::string jsonl;
    for (const auto& v : which) {
      ordered.push_back(rows.at(resume_key(v)));
      jsonl += row_to_json(ordered.back()).dump() + "\n";
    }
    write_output_set(folder.string(), {{"results.jsonl", jsonl}, {"results.csv", results_csv(ordered, axes)}});
    return ordered;
  };
  std::vector<SweepRow> ordered = write_results(dir, mine);
  if (mpi.size > 1) {
    std::ofstream(dir / ".done.tmp") << mpi.job << "\n";
    fs::rename(dir / ".done.tmp", dir / ".done");
    if (mpi.rank != 0)
      return 0;
    rows = gather_ranks(out, mpi);
    ordered = write_results(out, variants);
  }
  print_summary(ordered, axes, a, out);
  const std::size_t failures = std::count_if(ordered.begin(), ordered.end(), [](const auto& r) { return !r.ok; });
  return failures == ordered.size() && !ordered.empty() ? 1 : 0;
}

// `clustersim merge`: the results of several sweep folders (shards of one sweep) as one, in the sweep's order.
int merge(const std::vector<std::string>& inputs, const std::string& out_dir)
{
  check_output_dir(out_dir);
  std::map<std::size_t, SweepRow> by_index;
  std::vector<std::string> axes;
  for (const auto& dir : inputs) {
    const fs::path jsonl = fs::path(dir) / "results.jsonl";
    if (!fs::is_regular_file(jsonl))
      throw InputError(jsonl.string(), 0, 0, "not a sweep folder: no results.jsonl");
    for (auto& [key, row] : previous_rows(jsonl)) {
      if (axes.empty())
        for (const auto& [k, v] : row.variant.settings)
          axes.push_back(k);
      auto [it, fresh] = by_index.emplace(row.variant.index, row);
      if (!fresh && resume_key(it->second.variant) != key)
        throw InputError(jsonl.string(), 0, 0,
                         fmt::format("variant {} is '{}' here and '{}' in an earlier folder: not shards of one sweep",
                                     row.variant.index, row.variant.id, it->second.variant.id));
    }
  }
  std::vector<SweepRow> ordered;
  std::string jsonl;
  for (const auto& [index, row] : by_index) {
    ordered.push_back(row);
    jsonl += row_to_json(row).dump() + "\n";
  }
  write_output_set(out_dir, {{"results.jsonl", jsonl}, {"results.csv", results_csv(ordered, axes)}});
  std::cout << fmt::format("clustersim merge: {} variants from {} folders into {}/\n", ordered.size(), inputs.size(),
                           out_dir);
  return 0;
}

struct PlotArgs {
  std::string results, out;
  PlotRequest request;
};

// `clustersim plot`: gnuplot renders the script into a staging folder; both files are renamed into place together.
int plot(const PlotArgs& a)
{
  std::vector<std::string> axes;
  const std::vector<SweepRow> rows = read_results_csv(a.results, axes);
  fs::path prefix =
      a.out.empty() ? fs::path(a.results).parent_path() / (a.request.y + "-by-" + a.request.x) : fs::path(a.out);
  // `--out p.png` (or .svg) is the file the user named, in that format alone; any other name is a prefix for both.
  std::string only = prefix.extension().string();
  if (only == ".png" || only == ".svg")
    prefix.replace_extension();
  else
    only.clear();
  check_output_dir(prefix.has_parent_path() ? prefix.parent_path().string() : ".");
  // Not write_output_set: the pictures go beside a sweep's results, whose output set they must not replace.
  std::vector<std::string> written;
  if (const auto pooled = pooled_axes(rows, a.request); !pooled.empty())
    std::cerr << fmt::format("clustersim plot: each point is the mean over the settings of {} (no error bars: they "
                             "would not be intervals over seeds); give --by one of them to see them apart\n",
                             fmt::join(pooled, ", "));
  for (auto& [name, bytes] : render_gnuplot(gnuplot_script(rows, a.request, "{DIR}/plot"), {"plot.png", "plot.svg"})) {
    const std::string extension = name.substr(name.find('.'));
    if (!only.empty() && extension != only)
      continue;
    const fs::path target = prefix.string() + extension;
    const fs::path tmp = target.string() + ".tmp";
    std::ofstream(tmp, std::ios::binary) << bytes;
    fs::rename(tmp, target);
    written.push_back(target.string());
  }
  std::cout << "plot: " << written.front() << (written.size() > 1 ? " and " + written.back() : std::string()) << "\n";
  return 0;
}

} // namespace

std::vector<Command> add_sweep_commands(CLI::App& app)
{
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "run a scenario's variants (--axis key=v1,v2 or its sweep: block) and "
                                          "tabulate every metric");
  cmd->add_option("scenario", a->scenario, "scenario YAML file")->required();
  cmd->add_option("--axis", a->axes, "key=v1,v2,...: a scenario key and the values it takes (repeatable)");
  cmd->add_flag("--zip", a->zip, "pair the axes' i-th values instead of crossing them");
  cmd->add_option("--seeds", a->seeds, "run each variant with this many seeds (scenario seed, +1, ...)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--shard", a->shard,
                  "I/N: run only the variants whose index is I modulo N (one Slurm array task; "
                  "clustersim merge combines the folders)");
  cmd->add_option("--jobs", a->jobs, "variants run at once (local processes; default 1)")->check(CLI::Range(1, 256));
  cmd->add_option("--set", a->sets, "override a key in every variant (repeatable)");
  cmd->add_option("--backend", a->backend, "simgrid | analytical for every variant")
      ->check(CLI::IsMember({"simgrid", "analytical"}));
  cmd->add_option("--by", a->by, "group the summary by this axis (default: the first)");
  cmd->add_option("--goodput-days", a->goodput_days,
                  "run each variant's long run over this many days (clustersim goodput) and tabulate its ETTR, goodput "
                  "and lost GPU-hours instead of a report")
      ->check(CLI::Range(1e-9, 3650.0));
  cmd->add_option("--metric", a->metric, "metric of the summary (default: iteration_time_s, else the first)")
      ->check(declared_metric());
  cmd->add_option("--out", a->out_dir, "output folder (default ./out/<scenario name>-sweep/)")
      ->check([](const std::string& v) { return v.empty() ? std::string("--out must not be empty") : ""; });
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto merged = std::make_shared<std::string>();
  auto* merger = app.add_subcommand("merge", "combine the results of sweep shards (--shard I/N) into one folder");
  merger->add_option("folders", *inputs, "sweep output folders")->required();
  merger->add_option("--out", *merged, "merged output folder")->required();
  auto p = std::make_shared<PlotArgs>();
  auto* plotter = app.add_subcommand("plot", "plot a metric of sweep results against an axis (PNG and SVG, gnuplot)");
  plotter->add_option("results", p->results, "results.csv of clustersim sweep")->required();
  plotter->add_option("--x", p->request.x, "axis on the x axis")->required();
  plotter->add_option("--y", p->request.y, "metric on the y axis")->required()->check(declared_metric());
  plotter->add_option("--by", p->request.by, "one series per value of this axis");
  plotter->add_option("--title", p->request.title, "title (default: METRIC by AXIS)");
  plotter->add_option("--out", p->out,
                      "a file NAME.png or NAME.svg (that format alone), or a prefix for both (default: next to the "
                      "results, METRIC-by-AXIS)");
  return {{cmd, [a] { return sweep(*a); }},
          {merger, [inputs, merged] { return merge(*inputs, *merged); }},
          {plotter, [p] { return plot(*p); }}};
}

} // namespace cs
