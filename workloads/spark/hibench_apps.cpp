// HiBench-like Spark applications. Data sizes come from HiBench's scale profiles (conf/workloads/**, Intel-bigdata/
// HiBench @ 53ac935); the DAG of each follows its Spark implementation (MLlib k-means and logistic regression,
// the PageRank example, WordCount, TeraSort). [recon] Per-record CPU costs, object overheads, the mean out-degree of
// the PageRank graph and the word-count combine ratio are clustersim's assumptions, documented in docs/spark.md.
#include "workloads/spark/spark_apps.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace cs {
namespace {

struct Profile {
  double a = 0, b = 0; // kmeans: samples, dimensions; lr: examples, features; pagerank: pages; wordcount/terasort:
                       // bytes (terasort: rows)
  int iterations = 1;
};

const std::map<std::string, std::map<std::string, Profile>>& profiles()
{
  static const std::map<std::string, std::map<std::string, Profile>> table{{"kmeans",
                                                                            {{"tiny", {3e4, 3, 5}},
                                                                             {"small", {3e6, 20, 5}},
                                                                             {"large", {2e7, 20, 5}},
                                                                             {"huge", {1e8, 20, 5}},
                                                                             {"gigantic", {2e8, 20, 5}},
                                                                             {"bigdata", {1.2e9, 20, 10}}}},
                                                                           {"lr",
                                                                            {{"tiny", {100, 3}},
                                                                             {"small", {1000, 10}},
                                                                             {"large", {1e4, 1e5}},
                                                                             {"huge", {1e4, 3e5}},
                                                                             {"gigantic", {1e4, 5e5}},
                                                                             {"bigdata", {1e4, 7e5}}}},
                                                                           {"pagerank",
                                                                            {{"tiny", {50, 0, 1}},
                                                                             {"small", {5e3, 0, 3}},
                                                                             {"large", {5e5, 0, 3}},
                                                                             {"huge", {5e6, 0, 3}},
                                                                             {"gigantic", {3e7, 0, 3}},
                                                                             {"bigdata", {5e7, 0, 3}}}},
                                                                           {"wordcount",
                                                                            {{"tiny", {32000}},
                                                                             {"small", {320e6}},
                                                                             {"large", {3.2e9}},
                                                                             {"huge", {32e9}},
                                                                             {"gigantic", {320e9}},
                                                                             {"bigdata", {1.6e12}}}},
                                                                           {"terasort",
                                                                            {{"tiny", {32000}},
                                                                             {"small", {3.2e6}},
                                                                             {"large", {3.2e7}},
                                                                             {"huge", {3.2e8}},
                                                                             {"gigantic", {3.2e9}},
                                                                             {"bigdata", {6e9}}}}};
  return table;
}

// [recon] Costs per record on one core of a 2010s Xeon running the JVM.
constexpr double kFlopRate = 1e9;          // sustained FLOP/s of JVM numeric loops (MLlib BLAS-1)
constexpr double kRecordOverhead = 0.2e-6; // iterator and object handling per record
constexpr double kPagerankDegree = 10;     // mean out-links per page
constexpr double kEdgeCost = 0.5e-6;       // join + emit one contribution
constexpr double kTokenizeRate = 50e6;     // bytes/s: split and map-side combine
constexpr double kWordcountCombine = 0.05; // shuffle bytes / input after the map-side combine
constexpr double kSortRate = 30e6;         // bytes/s: sort and serialise a reduce partition
constexpr double kJvmVectorBytes = 64;     // headers of a deserialised vector and its array

class AppBuilder {
public:
  explicit AppBuilder(SparkApplication& app) : app_(app) {}
  int rdd(Rdd r)
  {
    app_.rdds.push_back(std::move(r));
    return static_cast<int>(app_.rdds.size()) - 1;
  }
  int stage(int rdd, double shuffle_write = 0, double output = 0, int tasks = 0)
  {
    Stage s;
    s.rdd = rdd;
    s.shuffle_write_bytes = shuffle_write;
    s.output_bytes = output;
    s.tasks = tasks;
    app_.stages.push_back(std::move(s));
    return static_cast<int>(app_.stages.size()) - 1;
  }
  void job(std::vector<int> stages, double driver_s) { app_.jobs.push_back({std::move(stages), driver_s}); }

private:
  SparkApplication& app_;
};

int partitions_for(const SparkAppParams& a, const SparkParams& p, double input)
{
  if (a.partitions > 0)
    return a.partitions;
  return static_cast<int>(std::clamp(std::ceil(input / p.block_size.value), 1.0, 100000.0));
}

int active_tasks(int partitions, double converge, int iteration)
{
  return std::max(1, static_cast<int>(std::ceil(partitions * std::pow(converge, iteration - 1) - 1e-9)));
}

/** MLlib-style iterative training over a cached RDD of vectors (k-means, logistic regression): a load job that
 *  caches the points, then per iteration a map stage over them and a small aggregation. */
void vector_training(AppBuilder& b, const SparkAppParams& a, const SparkParams& p, double records, double dims,
                     double flops_per_record, double aggregate_bytes, StorageLevel level, int iterations)
{
  const double input = records * (8 * dims + 16);
  const int parts = partitions_for(a, p, input);
  const double per_part = records / parts;
  // HiBench writes ML inputs as sequence or object files of vectors: reading them is deserialisation, not parsing.
  const int raw = b.rdd({"input", parts, 0, input / parts / p.deserialize_rate.value, input / parts, {}, {}, {}});
  const int points = b.rdd(
      {"points", parts, per_part * (8 * dims + kJvmVectorBytes), per_part * kRecordOverhead, 0, {raw}, {}, level});
  b.job({b.stage(points)}, 0);
  const double step = per_part * (flops_per_record / kFlopRate + kRecordOverhead);
  for (int i = 1; i <= iterations; ++i) {
    const int partial = b.rdd({"partial-" + std::to_string(i), parts, 0, step, 0, {points}, {}, {}});
    const int map = b.stage(partial, aggregate_bytes, 0, active_tasks(parts, a.converge, i));
    const int reduce_parts = std::min(parts, 8);
    const int sum = b.rdd({"aggregate-" + std::to_string(i), reduce_parts, 0, 1e-3, 0, {}, {map}, {}});
    b.job({map, b.stage(sum)}, a.driver_time.value);
  }
}

void pagerank(AppBuilder& b, const SparkAppParams& a, const SparkParams& p, double pages, StorageLevel level,
              int iterations)
{
  const double edges = pages * kPagerankDegree;
  const double edge_text = 2 * (std::floor(std::log10(std::max(pages, 10.0))) + 1) + 2;
  const double input = edges * edge_text;
  const int parts = partitions_for(a, p, input);
  const double e_part = edges / parts, v_part = pages / parts;
  const int raw = b.rdd({"edges", parts, 0, input / parts / p.scan_rate.value, input / parts, {}, {}, {}});
  const int pairs = b.rdd({"pairs", parts, 0, e_part * kRecordOverhead, 0, {raw}, {}, {}});
  const int group = b.stage(pairs, e_part * 16);
  const int links = b.rdd({"links", parts, v_part * 48 + e_part * 24, e_part * kRecordOverhead, 0, {}, {group}, level});
  int ranks = b.rdd({"ranks-0", parts, v_part * 32, v_part * kRecordOverhead, 0, {links}, {}, level});
  b.job({group, b.stage(ranks)}, 0);
  for (int i = 1; i <= iterations; ++i) {
    const int contribs =
        b.rdd({"contribs-" + std::to_string(i), parts, 0, e_part * kEdgeCost, 0, {links, ranks}, {}, {}});
    const int map = b.stage(contribs, e_part * 16, 0, active_tasks(parts, a.converge, i));
    ranks = b.rdd({"ranks-" + std::to_string(i), parts, v_part * 32, e_part * kRecordOverhead, 0, {}, {map}, level});
    b.job({map, b.stage(ranks, 0, i == iterations ? v_part * 24 : 0)}, a.driver_time.value);
  }
}

void batch(AppBuilder& b, const SparkAppParams& a, const SparkParams& p, double input, double shuffle_ratio,
           double map_rate, double reduce_rate, double output_ratio)
{
  const int parts = partitions_for(a, p, input);
  const double part = input / parts;
  const int raw = b.rdd({"input", parts, 0, part / p.scan_rate.value, part, {}, {}, {}});
  const int mapped = b.rdd({"mapped", parts, 0, part / map_rate, 0, {raw}, {}, {}});
  const int map = b.stage(mapped, part * shuffle_ratio);
  const double reduce_part = part * shuffle_ratio;
  const int reduced = b.rdd({"reduced", parts, 0, reduce_part / reduce_rate, 0, {}, {map}, {}});
  b.job({map, b.stage(reduced, 0, reduce_part * output_ratio)}, 0);
}

} // namespace

SparkApplication hibench_application(const SparkAppParams& a, const SparkParams& p)
{
  const auto& by_profile = profiles().at(a.workload);
  const Profile& pr = by_profile.at(a.profile);
  SparkApplication app;
  app.name = a.workload + "-" + a.profile;
  app.max_executors = a.executors > 0 ? a.executors : 4;
  AppBuilder b(app);
  const StorageLevel level = a.storage.empty() ? StorageLevel::MEMORY_ONLY : storage_level_of(a.storage);
  const int iterations = a.iterations > 0 ? a.iterations : std::max(1, pr.iterations);
  const double s = a.data_scale;
  if (a.workload == "kmeans") {
    const double k = 10; // HiBench's k for every profile
    vector_training(b, a, p, pr.a * s, pr.b, 3 * k * pr.b, k * (pr.b + 1) * 8, level, iterations);
  } else if (a.workload == "lr") {
    const int lbfgs = a.iterations > 0 ? a.iterations : 10; // HiBench LR runs L-BFGS; 10 passes assumed
    vector_training(b, a, p, pr.a * s, pr.b, 4 * pr.b, (pr.b + 1) * 8, level, lbfgs);
  } else if (a.workload == "pagerank") {
    pagerank(b, a, p, pr.a * s, level, iterations);
  } else if (a.workload == "wordcount") {
    batch(b, a, p, pr.a * s, kWordcountCombine, kTokenizeRate, kTokenizeRate, 1.0);
  } else if (a.workload == "terasort") {
    batch(b, a, p, pr.a * s * 100, 1.0, p.scan_rate.value, kSortRate, 1.0);
  } else {
    throw std::invalid_argument("unknown Spark workload '" + a.workload + "'");
  }
  app.validate();
  return app;
}

} // namespace cs
