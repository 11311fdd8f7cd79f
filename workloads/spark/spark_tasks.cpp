#include "workloads/spark/spark_run.hpp"

#include <algorithm>
#include <map>

namespace cs {

// A task computes its stage's RDD for one partition: for each RDD of the lineage, a cached copy is read where the
// cache layout finds one; otherwise its inputs (narrow parents, shuffle output, HDFS) are read and it is computed,
// and cached when persisted. Reads are started together and overlap the computation (Spark's iterators stream
// records), so a task takes about max(I/O, compute); the shuffle write and HDFS output follow.
bool SparkRun::run_task(int a, int st, int p, int id, int attempt)
{
  const auto& app = apps_[a];
  const auto& stage = app.stages[st];
  const ExecutorState e = execs_[id]; // a copy: granting executors reallocates execs_ while the task runs
  if (!stage.failed_attempt_s.empty() && attempt < static_cast<int>(stage.failed_attempt_s[p].size())) {
    // A recorded failure: its slot time as the log saw it (what it read or wrote before failing is not recorded).
    cluster_.compute(e.host, stage.failed_attempt_s[p][attempt] * setup_.params->cpu_scale);
    return false;
  }
  const double execution = execution_bytes(a, st);
  use_execution_memory(id, execution);
  TaskWork w;
  resolve(a, stage.rdd, p, e, w);
  if (!stage.task_seconds.empty()) // replay: the recorded compute replaces the RDDs' estimates
    w.compute += stage.task_seconds[p];
  cluster_.compute(e.host, w.compute * setup_.params->cpu_scale);
  for (const auto& io : w.io)
    rt_.wait(io);
  std::vector<CachedBlock> evicted;
  for (const auto& [rdd, recomputed] : w.inserts) {
    const BlockId block{a, rdd, p};
    const double bytes = app.rdds[rdd].partition_bytes;
    setup_.cache->insert({block, bytes, rt_.now(), id}, app.rdds[rdd].storage, id, evicted);
    if (recomputed) {
      ++out_.cache.recomputed;
      out_.cache.bytes_recomputed += bytes;
    }
    computed_[block] = 1;
  }
  out_.cache.evictions += static_cast<long>(evicted.size());
  if (ClusterRuntime::some(stage.shuffle_write_bytes))
    rt_.wait(cluster_.disk_io(e.host, stage.shuffle_write_bytes, true));
  if (ClusterRuntime::some(stage.output_bytes))
    cluster_.hdfs_write(e.host, stage.output_bytes, p_.replication, rng_, [](int, int) {});
  use_execution_memory(id, -execution);
  return true;
}

// What a task of stage `s` holds in execution memory: its shuffle output while sorting it and the shuffle input it
// aggregates, up to its fair share of the unified region (Spark gives each of N running tasks at most 1/N; beyond
// it the task spills, which is not priced).
double SparkRun::execution_bytes(int a, int s) const
{
  const auto& app = apps_[a];
  const auto& stage = app.stages[s];
  double bytes = stage.shuffle_write_bytes;
  for (int r : app.rdds_of_stage(s))
    for (int parent : app.rdds[r].shuffle_stages)
      bytes +=
          app.stages[parent].shuffle_write_bytes * app.stages[parent].task_count(app.rdds) / app.rdds[r].partitions;
  return std::min(bytes, executor_storage_bytes(p_) / p_.executor_cores);
}

// Execution takes unified memory from storage (evicting cached blocks) down to storage_fraction of it, and gives it
// back when the task ends.
void SparkRun::use_execution_memory(int id, double delta)
{
  if (delta == 0)
    return;
  auto& e = execs_[id];
  e.execution = std::max(0.0, e.execution + delta);
  if (!e.alive || e.released) // its application ended (or it was removed) while the task ran: no cache to resize
    return;
  const double unified = executor_storage_bytes(p_);
  std::vector<CachedBlock> evicted;
  setup_.cache->resize_executor(id, std::max(unified * p_.storage_fraction, unified - e.execution), evicted);
  out_.cache.evictions += static_cast<long>(evicted.size());
}

void SparkRun::resolve(int a, int rdd, int p, const ExecutorState& e, TaskWork& w)
{
  const auto& r = apps_[a].rdds[rdd];
  bool recompute = false;
  if (r.storage != StorageLevel::NONE) {
    const BlockId block{a, rdd, p};
    const BlockLookup found = setup_.cache->lookup(block, e.id, rt_.now());
    const bool before = computed_.count(block) > 0;
    auto& c = out_.cache;
    c.reads += before;
    const double deserialize = r.partition_bytes / p_.deserialize_rate.value;
    switch (found.source) {
    case BlockSource::LOCAL:
      ++c.memory_hits, ++c.local_hits;
      return;
    case BlockSource::HOST:
      ++c.memory_hits, ++c.host_hits;
      w.compute += deserialize;
      return;
    case BlockSource::REMOTE:
      ++c.memory_hits, ++c.remote_hits;
      if (found.host != e.host && ClusterRuntime::some(r.partition_bytes)) {
        w.io.push_back(cluster_.flow(found.host, e.host, r.partition_bytes));
        c.bytes_fetched_remote += r.partition_bytes;
      }
      w.compute += deserialize;
      return;
    case BlockSource::DISK:
      ++c.disk_hits;
      cluster_.read_from(found.host, e.host, r.partition_bytes, w.io);
      w.compute += deserialize;
      return;
    case BlockSource::MISS:
      recompute = before;
      break;
    }
  }
  for (int parent : r.narrow_parents)
    resolve(a, parent, p, e, w);
  for (int s : r.shuffle_stages)
    read_shuffle(a, s, r.partitions, e, w);
  if (r.input_bytes > 0)
    read_input(a, rdd, p, e, w);
  w.compute += r.compute_s;
  if (r.storage != StorageLevel::NONE)
    w.inserts.emplace_back(rdd, recompute);
}

// A reduce partition fetches its share of every map output, one fetch per host holding map outputs (Spark batches
// the blocks of one host into one request); local outputs are read from the local disk.
void SparkRun::read_shuffle(int a, int s_parent, int partitions, const ExecutorState& e, TaskWork& w)
{
  const auto& stage = apps_[a].stages[s_parent];
  const auto& hosts = state_[a].map_host[s_parent];
  std::map<int, double> per_host;
  for (int h : hosts)
    if (h >= 0)
      per_host[h] += stage.shuffle_write_bytes / partitions;
  for (const auto& [h, bytes] : per_host)
    cluster_.read_from(h, e.host, bytes, w.io);
}

// HDFS input: the local replica if there is one, else one in the reader's rack, else the first.
void SparkRun::read_input(int a, int rdd, int p, const ExecutorState& e, TaskWork& w)
{
  const double bytes = apps_[a].rdds[rdd].input_bytes;
  const auto& reps = replicas(a, rdd, p);
  int src = reps.front();
  for (int h : reps)
    if (h == e.host || (src != e.host && setup_.layout->rack_of[h] == setup_.layout->rack_of[e.host]))
      src = h;
  cluster_.read_from(src, e.host, bytes, w.io);
}

} // namespace cs
