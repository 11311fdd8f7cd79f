#include "models/spark/spark_app.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace cs {

StorageLevel storage_level_of(const std::string& name)
{
  if (name == "NONE")
    return StorageLevel::NONE;
  if (name == "MEMORY_ONLY")
    return StorageLevel::MEMORY_ONLY;
  if (name == "MEMORY_AND_DISK")
    return StorageLevel::MEMORY_AND_DISK;
  if (name == "DISK_ONLY")
    return StorageLevel::DISK_ONLY;
  throw std::invalid_argument("unknown storage level '" + name +
                              "' (expected NONE, MEMORY_ONLY, MEMORY_AND_DISK or DISK_ONLY)");
}

const char* storage_level_name(StorageLevel level)
{
  switch (level) {
  case StorageLevel::MEMORY_ONLY:
    return "MEMORY_ONLY";
  case StorageLevel::MEMORY_AND_DISK:
    return "MEMORY_AND_DISK";
  case StorageLevel::DISK_ONLY:
    return "DISK_ONLY";
  case StorageLevel::NONE:
    break;
  }
  return "NONE";
}

std::vector<int> SparkApplication::rdds_of_stage(int s) const
{
  std::vector<int> order;
  std::vector<char> seen(rdds.size(), 0);
  // Iterative post-order DFS over narrow parents: a parent is listed before every RDD that uses it.
  std::vector<std::pair<int, std::size_t>> stack{{stages.at(s).rdd, 0}};
  seen[stages[s].rdd] = 1;
  while (!stack.empty()) {
    auto& [r, next] = stack.back();
    if (next < rdds[r].narrow_parents.size()) {
      const int p = rdds[r].narrow_parents[next++];
      if (!seen[p]) {
        seen[p] = 1;
        stack.emplace_back(p, 0);
      }
      continue;
    }
    order.push_back(r);
    stack.pop_back();
  }
  return order;
}

std::vector<int> SparkApplication::parent_stages(int s) const
{
  std::vector<int> out;
  for (int r : rdds_of_stage(s))
    for (int p : rdds[r].shuffle_stages)
      if (std::find(out.begin(), out.end(), p) == out.end())
        out.push_back(p);
  return out;
}

namespace {

void check_rdds(const SparkApplication& app)
{
  const int n = static_cast<int>(app.rdds.size());
  for (int r = 0; r < n; ++r) {
    const Rdd& rdd = app.rdds[r];
    if (rdd.partitions < 1)
      throw std::invalid_argument(fmt::format("RDD {} ({}) has no partitions", r, rdd.name));
    if (!(rdd.partition_bytes >= 0) || !(rdd.compute_s >= 0) || !(rdd.input_bytes >= 0))
      throw std::invalid_argument(fmt::format("RDD {} ({}) has a negative or non-finite size or time", r, rdd.name));
    for (int p : rdd.narrow_parents) {
      // Parents come first: this rules out cycles and keeps lineage walks finite.
      if (p < 0 || p >= r)
        throw std::invalid_argument(
            fmt::format("RDD {} ({}) names narrow parent {}, not an earlier RDD", r, rdd.name, p));
      if (app.rdds[p].partitions != rdd.partitions)
        throw std::invalid_argument(fmt::format("RDD {} ({}) has {} partitions but its narrow parent {} has {}", r,
                                                rdd.name, rdd.partitions, p, app.rdds[p].partitions));
    }
    for (int s : rdd.shuffle_stages)
      if (s < 0 || s >= static_cast<int>(app.stages.size()) || app.stages[s].shuffle_write_bytes <= 0)
        throw std::invalid_argument(
            fmt::format("RDD {} ({}) reads stage {}, which is not a shuffle map stage", r, rdd.name, s));
  }
}

} // namespace

void SparkApplication::validate() const
{
  check_rdds(*this);
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const Stage& st = stages[s];
    if (st.rdd < 0 || st.rdd >= static_cast<int>(rdds.size()))
      throw std::invalid_argument(fmt::format("stage {} computes RDD {}, which does not exist", s, st.rdd));
    if (st.tasks < 0 || st.tasks > rdds[st.rdd].partitions)
      throw std::invalid_argument(
          fmt::format("stage {} runs {} tasks over {} partitions", s, st.tasks, rdds[st.rdd].partitions));
    if (!st.task_seconds.empty() && static_cast<int>(st.task_seconds.size()) != rdds[st.rdd].partitions)
      throw std::invalid_argument(fmt::format("stage {} records {} task times for {} partitions", s,
                                              st.task_seconds.size(), rdds[st.rdd].partitions));
    const auto partitions = static_cast<std::size_t>(rdds[st.rdd].partitions);
    if ((!st.failed_attempt_s.empty() && st.failed_attempt_s.size() != partitions) ||
        (!st.gives_up.empty() && st.gives_up.size() != partitions))
      throw std::invalid_argument(
          fmt::format("stage {} records failed attempts for other than its {} partitions", s, partitions));
    for (std::size_t p = 0; p < st.gives_up.size(); ++p)
      if (st.gives_up[p] && (st.failed_attempt_s.empty() || st.failed_attempt_s[p].empty()))
        throw std::invalid_argument(fmt::format("stage {} gives up on task {}, which records no failed attempt", s, p));
    for (int p : parent_stages(static_cast<int>(s)))
      if (p >= static_cast<int>(s))
        throw std::invalid_argument(fmt::format("stage {} reads the shuffle of stage {}, which is not earlier", s, p));
  }
  if (jobs.empty())
    throw std::invalid_argument("the application runs no job");
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (jobs[j].stages.empty())
      throw std::invalid_argument(fmt::format("job {} runs no stage", j));
    for (int s : jobs[j].stages)
      if (s < 0 || s >= static_cast<int>(stages.size()))
        throw std::invalid_argument(fmt::format("job {} names stage {}, which does not exist", j, s));
  }
  if (max_executors < 1)
    throw std::invalid_argument("the application needs at least one executor");
}

} // namespace cs
