#include "workloads/mapreduce/mapreduce_params.hpp"

#include "traces/trace_format.hpp"

namespace cs {
namespace {

void read_queue(ObjectReader& r, QueueParams& q)
{
  r.field("name", q.name, "queue name (jobs name their queue in rumen and jhist traces)")
      .field("capacity", q.capacity, "share of the cluster's containers guaranteed to this queue");
  r.require_positive("capacity", q.capacity);
}

void read_trace(ObjectReader t, MapReduceTraceParams& trace)
{
  t.choice("format", trace.format, trace_format_names("mapreduce"), "trace format")
      .field("file", trace.file, "trace file, relative to the scenario")
      .field("start", trace.start, "replay jobs submitted from this time on")
      .field("duration", trace.duration, "replay this long a window (0 = to the end)")
      .field("scale", trace.scale, "multiplies every byte count (SWIM: your cluster size / the trace's)")
      .field("max_jobs", trace.max_jobs, "replay at most this many jobs (0 = all)");
  t.finish();
  t.require_non_negative("start", trace.start.value);
  t.require_non_negative("duration", trace.duration.value);
  t.require_positive("scale", trace.scale);
  // 1e300 once ran for ever (bytes past any size, then heartbeats past any count); 1e6 replays wordcount in 0.1 s.
  t.require_at_most("scale", trace.scale, 1e6);
  t.require_non_negative("max_jobs", trace.max_jobs);
}

void read_synthetic(ObjectReader g, SyntheticJobsParams& synthetic)
{
  g.field("jobs", synthetic.jobs, "number of jobs (0 = none; then a trace is needed)")
      .field("mean_interarrival", synthetic.mean_interarrival, "mean time between submissions")
      .field("min_input", synthetic.min_input, "smallest job input")
      .field("max_input", synthetic.max_input, "largest job input")
      .field("shuffle_ratio", synthetic.shuffle_ratio, "shuffle bytes / input bytes")
      .field("output_ratio", synthetic.output_ratio, "output bytes / shuffle bytes");
  g.finish();
  g.require_non_negative("jobs", synthetic.jobs);
  g.require_at_most("jobs", synthetic.jobs, 100000);
  g.require_positive("mean_interarrival", synthetic.mean_interarrival.value);
  g.require_positive("min_input", synthetic.min_input.value);
  g.require_positive("max_input", synthetic.max_input.value);
  g.require_non_negative("shuffle_ratio", synthetic.shuffle_ratio);
  g.require_non_negative("output_ratio", synthetic.output_ratio);
  if (!g.describing() && synthetic.min_input.value > synthetic.max_input.value)
    g.fail_at("min_input", "min_input is larger than max_input");
}

} // namespace

void read_mapreduce(ObjectReader r, MapReduceParams& m, bool selected)
{
  read_trace(r.child("trace", "replay jobs from a trace (SWIM TSV, Hadoop rumen JSON or MRv2 .jhist)"), m.trace);
  read_synthetic(r.child("synthetic", "generate jobs: Poisson arrivals, log-uniform input sizes"), m.synthetic);
  r.field("block_size", m.block_size, "HDFS block size: one map per block")
      .field("replication", m.replication, "HDFS replicas per block")
      .field("writer_racks", m.writer_racks,
             "0: input written from outside the cluster (first replica on a random host); k: each dataset was "
             "written from the hosts of k racks (HDFS puts the first replica on the writer)")
      .field("containers_per_host", m.containers_per_host, "YARN containers per host (0 = its cores)")
      .field("reduce_bytes_per_task", m.reduce_bytes_per_task, "shuffle bytes per reducer when a trace gives no count")
      .field("max_reduces", m.max_reduces, "most reducers per job when derived (Hive's default 999)")
      .field("slowstart", m.slowstart, "share of maps done before reducers start (Hadoop's default 0.05)")
      .field("reduce_rampup_limit", m.reduce_rampup_limit,
             "share of a job's containers reducers may hold while maps are pending")
      .field("heartbeat", m.heartbeat, "node heartbeat interval: one scheduling round per heartbeat")
      .field("parallel_copies", m.parallel_copies, "concurrent shuffle fetches per reducer")
      .field("map_rate", m.map_rate, "bytes/s a map container processes")
      .field("reduce_rate", m.reduce_rate, "bytes/s a reduce container processes")
      .field("am_container", m.am_container,
             "each job's MRAppMaster holds one container from its start to the job's end, as on YARN (off by default: "
             "the reference scenarios were set up without it)")
      .field("am_startup", m.am_startup, "from the AM's container to the job's first task (AM start-up, setup)")
      .field("job_commit", m.job_commit, "from the last task's end to the job's end (output commit, AM shut-down)")
      .field("recorded_overheads", m.recorded_overheads,
             "traces: each job's recorded start-up and commit times replace am_startup and job_commit")
      .field("speculative", m.speculative, "speculative execution of slow maps")
      .field("speculative_slowdown", m.speculative_slowdown,
             "a map running this many times longer than its job's mean map gets a speculative copy")
      .field("slow_host_fraction", m.slow_host_fraction, "share of hosts that compute slowly (stragglers)")
      .field("slow_host_factor", m.slow_host_factor, "how many times slower those hosts compute")
      .field("level_costs", m.level_costs, "traffic cost per byte by level: same host, rack, pod, core")
      .list<QueueParams>("queues", m.queues, "capacity scheduler queues", read_queue)
      .field("middleboxes", m.middleboxes,
             "switches (e.g. agg0, core) every inter-rack flow must traverse, in order: the network policy PAT "
             "optimises and `communication_cost` measures");
  r.finish();
  r.require_positive("block_size", m.block_size.value);
  r.require(m.block_size.value >= 1048576.0, "block_size",
            "block_size must be at least 1 MiB (HDFS's own minimum, dfs.namenode.fs-limits.min-block-size)");
  r.require_positive("replication", m.replication);
  r.require_non_negative("writer_racks", m.writer_racks);
  r.require_non_negative("containers_per_host", m.containers_per_host);
  r.require_positive("reduce_bytes_per_task", m.reduce_bytes_per_task.value);
  r.require_positive("max_reduces", m.max_reduces);
  r.require_positive("heartbeat", m.heartbeat.value);
  // One scheduling round per heartbeat: 1 ns made a 28 s job 2.8e10 rounds (no end); 1 ms takes 0.1 s.
  r.require(m.heartbeat.value >= 1e-3, "heartbeat", "heartbeat must be at least 1 ms (one scheduling round each)");
  r.require_positive("parallel_copies", m.parallel_copies);
  r.require_positive("map_rate", m.map_rate.value);
  r.require_positive("reduce_rate", m.reduce_rate.value);
  r.require_non_negative("am_startup", m.am_startup.value);
  r.require_non_negative("job_commit", m.job_commit.value);
  if (r.describing())
    return;
  if (m.slowstart < 0 || m.slowstart > 1)
    r.fail_at("slowstart", "slowstart must be between 0 and 1");
  if (!(m.reduce_rampup_limit > 0) || m.reduce_rampup_limit > 1)
    r.fail_at("reduce_rampup_limit", "reduce_rampup_limit must be in (0, 1]");
  if (!(m.speculative_slowdown > 1))
    r.fail_at("speculative_slowdown", "speculative_slowdown must be greater than 1");
  if (m.slow_host_fraction < 0 || m.slow_host_fraction > 1)
    r.fail_at("slow_host_fraction", "slow_host_fraction must be between 0 and 1");
  if (!(m.slow_host_factor >= 1))
    r.fail_at("slow_host_factor", "slow_host_factor must be at least 1");
  if (m.level_costs.size() != 4)
    r.fail_at("level_costs", "level_costs needs 4 numbers: same host, rack, pod, core");
  for (std::size_t i = 0; i < 4; ++i)
    if (m.level_costs[i] < 0 || (i > 0 && m.level_costs[i] < m.level_costs[i - 1]))
      r.fail_at("level_costs", "level_costs must be non-negative and non-decreasing");
  if (m.queues.empty())
    r.fail_at("queues", "at least one queue is needed");
  if (selected && m.synthetic.jobs == 0 && m.trace.file.empty())
    r.fail_at("synthetic", "a mapreduce workload needs jobs: set synthetic.jobs or trace.file");
  if (m.synthetic.jobs > 0 && !m.trace.file.empty())
    r.fail_at("synthetic", "give either synthetic jobs or a trace, not both");
}

} // namespace cs
