// clustersim sweep: variants crossed and zipped, seeds, results files, resumption, failing variants.
#include "base/yaml_reader.hpp"
#include "sim/report/gnuplot.hpp"
#include "sim/sweep/sweep_plot.hpp"
#include "sim/sweep/sweep_results.hpp"
#include "sim/sweep/sweep_spec.hpp"
#include "tests/cli/run_cli.hpp"

#include "base/input_error.hpp"
#include "tests/test_support.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

using cs::testing::clustersim;
using cs::testing::fresh_dir;
using cs::testing::src;

std::vector<std::string> lines_of(const fs::path& p)
{
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// A results.jsonl without its wall times: what must be byte-identical between two ways of running one sweep.
std::vector<std::string> without_wall(const fs::path& p)
{
  std::vector<std::string> out;
  for (auto line : lines_of(p)) {
    auto j = nlohmann::json::parse(line);
    j.erase("wall_time_s");
    out.push_back(j.dump());
  }
  return out;
}

} // namespace

TEST(SweepSpec, CrossedZippedAndSeededVariantsInAFixedOrder)
{
  cs::SweepSpec spec;
  cs::add_axis_flags(spec, {"cluster.nodes=1,2", "policies.sync=[a, b],c"});
  spec.seeds = 2;
  auto v = cs::sweep_variants(spec, 7);
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[0].id, "cluster.nodes=1,policies.sync=[a, b],seed=7");
  EXPECT_EQ(v[1].id, "cluster.nodes=1,policies.sync=[a, b],seed=8");
  EXPECT_EQ(v[2].id, "cluster.nodes=1,policies.sync=c,seed=7");
  EXPECT_EQ(v[7].id, "cluster.nodes=2,policies.sync=c,seed=8");
  spec.zip = true;
  spec.seeds = 1;
  v = cs::sweep_variants(spec, 1);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].id, "cluster.nodes=2,policies.sync=c,seed=1");
  cs::add_axis_flags(spec, {"workload.iterations=1,2,3"});
  EXPECT_THROW(cs::sweep_variants(spec, 1), cs::InputError);                   // zipped axes of different lengths
  EXPECT_THROW(cs::add_axis_flags(spec, {"cluster.nodes=3"}), cs::InputError); // an axis twice
  EXPECT_THROW(cs::add_axis_flags(spec, {"nodes"}), cs::InputError);
  EXPECT_THROW(cs::add_axis_flags(spec, {"a=1,,2"}), cs::InputError);
}

TEST(SweepSpec, SweepBlockIsReadWithPositions)
{
  cs::SweepSpec spec;
  cs::read_sweep_block(spec, YAML::Load("{axes: {cluster.nodes: [1, 2], x: [{a: 1}]}, mode: zip, seeds: 3}"), "f");
  ASSERT_EQ(spec.axes.size(), 2u);
  EXPECT_EQ(spec.axes[1].values[0], "{a: 1}");
  EXPECT_TRUE(spec.zip);
  EXPECT_EQ(spec.seeds, 3);
  EXPECT_THROW(cs::read_sweep_block(spec, YAML::Load("{axes: {n: []}}"), "f"), cs::InputError);
  EXPECT_THROW(cs::read_sweep_block(spec, YAML::Load("{mode: diagonal}"), "f"), cs::InputError);
  EXPECT_THROW(cs::read_sweep_block(spec, YAML::Load("{seeds: 0}"), "f"), cs::InputError);
  EXPECT_THROW(cs::read_sweep_block(spec, YAML::Load("{axis: {}}"), "f"), cs::InputError);
}

TEST(SweepSpec, ValuesGivenBySetAreLabelledWithoutTheirOverrideTag)
{
  // A sweep block from --set carries the override's tag on every value; results.csv once read "!<!cs-set-0> hit".
  cs::SweepSpec spec;
  YAML::Node block = YAML::Load("{axes: {policies.mapreduce: [capacity, {name: hit}]}}");
  block["axes"]["policies.mapreduce"][0].SetTag(std::string(cs::kOverrideTag) + "0");
  block["axes"]["policies.mapreduce"][1].SetTag(std::string(cs::kOverrideTag) + "0");
  cs::read_sweep_block(spec, block, "f");
  ASSERT_EQ(spec.axes.size(), 1u);
  EXPECT_EQ(spec.axes[0].values[0], "capacity");
  EXPECT_EQ(spec.axes[0].values[1], "{name: hit}");
}

TEST(SweepResults, SummaryHasTheMeanAndAStudentInterval)
{
  std::vector<cs::SweepRow> rows;
  for (double x : {1.0, 2.0, 3.0}) {
    cs::SweepRow r;
    r.variant.settings = {{"k", "a"}};
    r.ok = true;
    r.metrics["m"] = x;
    rows.push_back(r);
  }
  // mean 2, sd 1, n 3: t(2) = 4.303, half-width 4.303 / sqrt(3) = 2.48.
  const std::string table = cs::summary_table(rows, "k", "m");
  EXPECT_NE(table.find("± 2.48"), std::string::npos) << table;
  // Another axis pooled into a group: its range, not an interval that mixes settings with seeds (once "± 0.0395"
  // with one seed).
  std::vector<cs::SweepRow> crossed = rows;
  for (std::size_t i = 0; i < crossed.size(); ++i)
    crossed[i].variant.settings.emplace_back("j", std::to_string(i));
  const std::string pooled = cs::summary_table(crossed, "k", "m");
  EXPECT_EQ(pooled.find("±"), std::string::npos) << pooled;
  EXPECT_NE(pooled.find("1..3"), std::string::npos) << pooled;
  EXPECT_NE(pooled.find("not an interval over seeds"), std::string::npos) << pooled;
  EXPECT_NE(cs::results_csv(rows, {"k"}).find("k,seed,status,m,backend,overrides,wall_time_s,error\na,1,ok,1,"),
            std::string::npos);
}

TEST(SweepPlot, PointsSayWhatTheyAverageAndGroupedBarsLabelEachGroupOnce)
{
  std::vector<cs::SweepRow> rows;
  for (const char* policy : {"a", "b"})
    for (const char* layers : {"2", "4"})
      for (const char* size : {"x", "y"}) {
        cs::SweepRow r;
        r.variant.settings = {{"policy", policy}, {"layers", layers}, {"size", size}};
        r.ok = true;
        r.metrics["m"] = 1;
        rows.push_back(r);
      }
  cs::PlotRequest by_policy{"size", "m", "policy", ""};
  // Without layers as a series, each point pools both its settings: said in the title, and no error bar.
  EXPECT_EQ(cs::pooled_axes(rows, by_policy), std::vector<std::string>{"layers"});
  const std::string script = cs::gnuplot_script(rows, by_policy, "p");
  EXPECT_NE(script.find("(mean over layers)"), std::string::npos) << script;
  // Categorical x: one tick label per group (each series once repeated them all).
  std::size_t labels = 0;
  for (auto at = script.find("xtic(2)"); at != std::string::npos; at = script.find("xtic(2)", at + 1))
    ++labels;
  EXPECT_EQ(labels, 2u) << script; // the PNG's plot line and the SVG's
  EXPECT_TRUE(cs::pooled_axes(rows, cs::PlotRequest{"size", "m", "layers", ""}) == std::vector<std::string>{"policy"});
}

TEST(SweepPlot, LogAxesOnlyWhereThePointsSpanMoreThanTenfold)
{
  // The capacity frontier once drew log-log axes over costs within 40% of each other: every point in one corner.
  EXPECT_EQ(cs::gnuplot_log_axes({0.36, 0.6, 1.2, 6.5}, {2290, 2400, 2640, 3015}), "set logscale x\n");
  EXPECT_EQ(cs::gnuplot_log_axes({1, 2}, {10, 1000}), "set logscale y\n");
  EXPECT_EQ(cs::gnuplot_log_axes({1, 100}, {1, 100}), "set logscale xy\n");
  EXPECT_EQ(cs::gnuplot_log_axes({1, 2}, {0, 100}), ""); // zero cannot sit on a log axis
  EXPECT_EQ(cs::gnuplot_log_axes({}, {}), "");
}

TEST(Sweep, RunsVariantsInParallelRecordsFailuresAndResumes)
{
  const fs::path out = fresh_dir("run");
  const std::string base = "sweep " + src("scenarios/quickstart.yaml") +
                           " --backend analytical --set workload.iterations=1 --axis workload.batch.micro=4,3 "
                           "--seeds 2 --jobs 2 --out " +
                           out.string();
  auto r = clustersim(base);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 variants"), std::string::npos) << r.out;
  // micro 3 does not divide the batch: recorded with its error, the sweep goes on.
  EXPECT_NE(r.out.find("failed workload.batch.micro=3,seed=1: "), std::string::npos) << r.out;
  auto csv = lines_of(out / "results.csv");
  ASSERT_EQ(csv.size(), 5u);
  EXPECT_EQ(csv[0].rfind("workload.batch.micro,seed,status,", 0), 0u) << csv[0];
  EXPECT_EQ(csv[1].rfind("4,1,ok,", 0), 0u) << csv[1];
  EXPECT_EQ(csv[3].rfind("3,1,failed,", 0), 0u) << csv[3];
  EXPECT_EQ(lines_of(out / "results.jsonl").size(), 4u);
  // Again: nothing left to run, the same results.
  auto again = clustersim(base);
  EXPECT_NE(again.out.find("4 already done"), std::string::npos) << again.out;
  EXPECT_EQ(lines_of(out / "results.csv"), csv);
  // One more axis value: only the new variants run.
  auto more = clustersim(base + " --axis workload.model.layers=2");
  EXPECT_NE(more.out.find("0 already done"), std::string::npos) << more.out; // new ids: every variant names layers
  // Another backend or another override defines other variants: none is reused (a mixed table once resulted), and
  // the table says which backend and overrides each row ran with.
  std::string simgrid = base;
  simgrid.replace(simgrid.find("--backend analytical"), 20, "--backend simgrid");
  auto other = clustersim(simgrid);
  EXPECT_NE(other.out.find("0 already done"), std::string::npos) << other.out;
  auto lines = lines_of(out / "results.csv");
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_NE(lines[0].find(",backend,overrides,"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(",simgrid,workload.iterations=1,"), std::string::npos) << lines[1];
  auto reset = clustersim(base + " --set workload.model.layers=2");
  EXPECT_NE(reset.out.find("0 already done"), std::string::npos) << reset.out;
  fs::remove_all(out);
}

TEST(Sweep, BadAxesAreInputErrors)
{
  auto r = clustersim("sweep " + src("scenarios/quickstart.yaml") + " --axis cluster.nodes --out /tmp/x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("expected key=value1,value2"), std::string::npos) << r.err;
  r = clustersim("sweep " + src("scenarios/quickstart.yaml") + " --axis cluster.nodes=1,2 --by seed --out /tmp/x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--by seed: not an axis"), std::string::npos) << r.err;
  // A metric nobody declares is refused before any variant runs (it once tabulated an empty column).
  r = clustersim("sweep " + src("scenarios/quickstart.yaml") +
                 " --axis cluster.nodes=1,2 --metric step_s --out /tmp/x");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown metric 'step_s' (clustersim list metrics"), std::string::npos) << r.err;
}

TEST(Sweep, ShardsMergeIntoTheLocalRunsResults)
{
  // Two Slurm array tasks (--shard 0/2, 1/2), merged, equal one local run byte for byte apart from wall times.
  const std::string base = "sweep " + src("scenarios/quickstart.yaml") +
                           " --backend analytical --set workload.iterations=1 --axis workload.batch.micro=1,2,4 "
                           "--seeds 2 --out ";
  const fs::path s0 = fresh_dir("s0"), s1 = fresh_dir("s1"), merged = fresh_dir("merged"), local = fresh_dir("local");
  ASSERT_EQ(clustersim(base + s0.string() + " --shard 0/2").code, 0);
  ASSERT_EQ(clustersim(base + s1.string() + " --shard 1/2").code, 0);
  EXPECT_EQ(lines_of(s0 / "results.jsonl").size(), 3u);
  auto m = clustersim("merge " + s0.string() + " " + s1.string() + " --out " + merged.string());
  ASSERT_EQ(m.code, 0) << m.err;
  ASSERT_EQ(clustersim(base + local.string() + " --jobs 2").code, 0);
  EXPECT_EQ(without_wall(merged / "results.jsonl"), without_wall(local / "results.jsonl"));
  EXPECT_EQ(clustersim(base + s0.string() + " --shard 2/2").code, 2);
  EXPECT_EQ(clustersim("merge " + src("scenarios") + " --out " + merged.string()).code, 2);
  for (const auto& d : {s0, s1, merged, local})
    fs::remove_all(d);
}

namespace {
// Width and height from a PNG's IHDR chunk (bytes 16-23, big-endian), or {0, 0} when it is not a PNG.
std::pair<unsigned, unsigned> png_size(const fs::path& p)
{
  std::ifstream in(p, std::ios::binary);
  std::string head(24, '\0');
  in.read(head.data(), 24);
  if (head.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || head.compare(12, 4, "IHDR") != 0)
    return {0, 0};
  auto be = [&](int at) {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i)
      v = v << 8 | static_cast<unsigned char>(head[at + i]);
    return v;
  };
  return {be(16), be(20)};
}
} // namespace

TEST(Plot, BarsAndLinesRenderAsPngAndSvg)
{
  const fs::path out = fresh_dir("plot");
  ASSERT_EQ(clustersim("sweep " + src("scenarios/quickstart.yaml") +
                       " --backend analytical --set workload.iterations=1 --axis workload.batch.micro=2,4 --axis "
                       "policies.pipeline=1f1b,gpipe --out " +
                       out.string())
                .code,
            0);
  // Numeric x: lines; text x: bars; both with a series per value of --by.
  for (const auto& [x, by] : {std::pair<std::string, std::string>{"workload.batch.micro", "policies.pipeline"},
                              {"policies.pipeline", "workload.batch.micro"}}) {
    const fs::path prefix = out / ("p-" + x);
    auto r = clustersim("plot " + (out / "results.csv").string() + " --x " + x + " --y iteration_time_s --by " + by +
                        " --out " + prefix.string());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(png_size(prefix.string() + ".png"), (std::pair<unsigned, unsigned>{900, 540}));
    std::ifstream svg(prefix.string() + ".svg");
    std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("<svg"), std::string::npos);
    EXPECT_NE(text.find("width=\"900\" height=\"540\""), std::string::npos);
    EXPECT_NE(text.find("iteration_time_s"), std::string::npos);
  }
  // A name with an extension is the file the user asked for, in that format alone (it once wrote p.png.png and
  // p.png.svg).
  for (const char* name : {"named.png", "named.svg"}) {
    auto r = clustersim("plot " + (out / "results.csv").string() +
                        " --x workload.batch.micro --y iteration_time_s --out " + (out / name).string());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(out / name)) << name;
    EXPECT_FALSE(fs::exists(out / (std::string(name) + ".png")));
    EXPECT_FALSE(fs::exists(out / (std::string(name) + ".svg")));
  }
  EXPECT_EQ(png_size((out / "named.png").string()), (std::pair<unsigned, unsigned>{900, 540}));
  EXPECT_FALSE(fs::exists(out / "named.svg.png"));
  auto bad = clustersim("plot " + (out / "results.csv").string() + " --x nodes --y iteration_time_s");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--x nodes: not an axis"), std::string::npos) << bad.err;
  EXPECT_EQ(clustersim("plot " + src("scenarios/quickstart.yaml") + " --x a --y b").code, 2);
  fs::remove_all(out);
}

TEST(Plot, RunPlotsDrawTheTimelineUtilizationBreakdownAndJobTimes)
{
  const fs::path train = fresh_dir("runplots"), jobs = fresh_dir("jctplots");
  ASSERT_EQ(clustersim("run " + src("scenarios/gpt-pipeline.yaml") + " --quiet --plots --out " + train.string()).code,
            0);
  for (const char* name : {"timeline", "utilization", "breakdown"}) {
    EXPECT_EQ(png_size(train / (std::string(name) + ".png")), (std::pair<unsigned, unsigned>{1000, 600})) << name;
    EXPECT_GT(fs::file_size(train / (std::string(name) + ".svg")), 1000u) << name;
  }
  EXPECT_FALSE(fs::exists(train / "trace.json")) << "--plots alone writes no trace";
  ASSERT_EQ(clustersim("run " + src("scenarios/reference/mapreduce-hit-paper.yaml") +
                       " --quiet --plots --set workload.mapreduce.synthetic.jobs=10 --out " + jobs.string())
                .code,
            0);
  EXPECT_EQ(png_size(jobs / "jct.png"), (std::pair<unsigned, unsigned>{1000, 600}));
  const fs::path apps = fresh_dir("sparkplots");
  ASSERT_EQ(clustersim("run " + src("scenarios/spark-hibench.yaml") + " --quiet --plots --out " + apps.string()).code,
            0);
  EXPECT_EQ(png_size(apps / "jct.png"), (std::pair<unsigned, unsigned>{1000, 600})); // Spark's apps.csv
  EXPECT_GT(fs::file_size(apps / "timeline.svg"), 1000u);
  fs::remove_all(train);
  fs::remove_all(jobs);
  fs::remove_all(apps);
}

TEST(Sweep, MpirunRanksShareTheSweepAndRankZeroMergesIt)
{
  // `mpirun -n 2 clustersim sweep ...` on loopback equals a local run, byte for byte apart from wall times.
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no mpirun (make deps installs openmpi-bin)";
  // A host whose mpirun cannot launch even one rank (no slots, no hwloc topology) is not this test's subject.
  if (std::system("mpirun -n 2 --oversubscribe --allow-run-as-root true >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "mpirun cannot launch two ranks here";
  const fs::path mpi = fresh_dir("mpi"), local = fresh_dir("mpilocal");
  const std::string args = " sweep " + src("scenarios/quickstart.yaml") +
                           " --backend analytical --set workload.iterations=1 --axis workload.batch.micro=1,2,4 "
                           "--seeds 2 --out ";
  const std::string launch = "mpirun -n 2 --oversubscribe --allow-run-as-root " + std::string(CS_BINARY) + args +
                             mpi.string() + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(launch.c_str()), 0) << launch;
  ASSERT_EQ(clustersim(args + local.string()).code, 0);
  EXPECT_EQ(without_wall(mpi / "results.jsonl").size(), 6u);
  EXPECT_EQ(without_wall(mpi / "results.jsonl"), without_wall(local / "results.jsonl"));
  EXPECT_EQ(lines_of(mpi / "mpi" / "1" / "results.jsonl").size(), 3u) << "rank 1 ran its half";
  fs::remove_all(mpi);
  fs::remove_all(local);
}
