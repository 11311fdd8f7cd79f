#include "workloads/collective/collective_metrics.hpp"

#include <fmt/format.h>

namespace cs {

std::vector<CollectiveRow> collective_rows(const CollectiveSweep& sweep, const Timeline& tl, const std::string& op)
{
  std::vector<CollectiveRow> rows;
  const int n = static_cast<int>(sweep.hosts.size());
  for (std::size_t i = 0; i < sweep.sizes.size(); ++i) {
    double start = sweep.start_marker[i] < 0 ? 0.0 : tl.end[sweep.start_marker[i]];
    double seconds = tl.end[sweep.end_marker[i]] - start;
    CollectiveRow r;
    r.bytes = sweep.sizes[i];
    r.seconds = seconds;
    r.algbw = seconds > 0 ? r.bytes / seconds / 1e9 : 0;
    r.busbw = r.algbw * busbw_factor(op, n);
    r.algorithm = sweep.choices[i].algorithm;
    r.protocol = sweep.choices[i].protocol.name;
    rows.push_back(r);
  }
  return rows;
}

std::string nccl_tests_table(const std::vector<CollectiveRow>& rows, const std::string& op, int ranks)
{
  const bool reduces = op == "all-reduce" || op == "reduce-scatter";
  std::string out = fmt::format("# {} over {} ranks (simulated; float elements)\n", op, ranks);
  out += fmt::format("#{:>12} {:>12} {:>8} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6}  {}\n", "size", "count", "type", "redop",
                     "root", "time", "algbw", "busbw", "#wrong", "algorithm");
  out += fmt::format("#{:>12} {:>12} {:>8} {:>6} {:>6} {:>9} {:>7} {:>7} {:>6}\n", "(B)", "(elements)", "", "", "",
                     "(us)", "(GB/s)", "(GB/s)", "");
  for (const auto& r : rows)
    out += fmt::format(" {:>12.0f} {:>12.0f} {:>8} {:>6} {:>6} {:>9.2f} {:>7.2f} {:>7.2f} {:>6}  {}/{}\n", r.bytes,
                       std::floor(r.bytes / 4), "float", reduces ? "sum" : "none", op == "broadcast" ? 0 : -1,
                       r.seconds * 1e6, r.algbw, r.busbw, "N/A", r.algorithm, r.protocol);
  return out;
}

std::string collective_csv(const std::vector<CollectiveRow>& rows)
{
  std::string out = "size_bytes,time_s,algbw_gbps,busbw_gbps,algorithm,protocol\n";
  for (const auto& r : rows)
    out += fmt::format("{:.0f},{:.9g},{:.6g},{:.6g},{},{}\n", r.bytes, r.seconds, r.algbw, r.busbw, r.algorithm,
                       r.protocol);
  return out;
}

RunMetrics collective_metrics(const CollectiveSweep& sweep, const std::vector<CollectiveRow>& rows,
                              const PlatformSpec& platform)
{
  RunMetrics m;
  const CollectiveRow& last = rows.back();
  m.set(metric::collective_time_s, last.seconds);
  m.set(metric::message_bytes, last.bytes);
  m.set(metric::algbw_gbps, last.algbw);
  m.set(metric::busbw_gbps, last.busbw);
  m.set(metric::size_count, static_cast<double>(rows.size()));
  m.set(metric::task_count, static_cast<double>(sweep.graph.size()));
  m.breakdown["closed_form_sizes"] = sweep.closed_form_sizes;
  // Bytes crossing each link tier (a byte crossing two NVLink ports counts twice), over the whole sweep.
  const Topology& topo = platform.topology;
  double total = 0;
  for (const TaskGraph* g : {&sweep.graph, &sweep.expanded})
    for (const auto& t : g->tasks()) {
      if (t.kind != TaskKind::TRANSFER || t.host == t.dst)
        continue;
      total += t.bytes;
      for (const auto& use : topo.route(t.host, t.dst)) {
        std::string tier = topo.links()[use.link].tier;
        for (auto& ch : tier)
          if (ch == '-')
            ch = '_';
        m.breakdown["bytes_" + tier] += t.bytes;
      }
    }
  m.set(metric::network_bytes, total);
  return m;
}

} // namespace cs
