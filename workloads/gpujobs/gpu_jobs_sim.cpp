#include "workloads/gpujobs/gpu_jobs_sim.hpp"

#include <algorithm>
#include <numeric>
#include <queue>
#include <set>

namespace cs {
namespace {

class JobsRun : public ClusterQueueView {
public:
  JobsRun(const std::vector<GpuTraceJob>& jobs, const PlatformSpec& platform, int gpus_per_node,
          const GangPlacement& placement, const PlacementSlowdown& slowdown)
      : jobs_(jobs), placement_(placement), slowdown_(slowdown)
  {
    const Topology& t = platform.topology;
    const int gpus = t.host_count();
    c_.gpus_per_node = gpus_per_node;
    c_.free_milli.assign(static_cast<std::size_t>(gpus), 1000);
    c_.free_whole.assign(static_cast<std::size_t>(gpus / gpus_per_node), gpus_per_node);
    for (int n = 0; n < c_.nodes(); ++n) // a node's rack: its leaf switch group
      c_.rack_of_node.push_back(t.vertex(t.hosts()[n * gpus_per_node]).groups.at(1));
    out_.jobs.resize(jobs.size());
    held_.resize(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j)
      out_.jobs[j] = GpuJobRecord{jobs[j].submit_s, -1, -1, jobs[j].gpus, jobs[j].gpu_milli, 0, 0, 1};
  }

  double now() const override { return now_; }
  int total_gpus() const override { return static_cast<int>(c_.free_milli.size()); }
  int free_gpus() const override { return free_; }
  const std::vector<RunningJob>& running() const override { return running_view_; }
  bool try_start(const QueuedJob& job) override;

  GpuJobsOutcome run(JobScheduler& scheduler);

private:
  void advance(double t);
  void finish(int j);
  void refresh_running_view();

  const std::vector<GpuTraceJob>& jobs_;
  const GangPlacement& placement_;
  const PlacementSlowdown& slowdown_;
  ClusterGpus c_;
  int free_ = 0;
  double now_ = 0;
  int busy_milli_ = 0; // thousandths of GPUs held
  int fragmented_ = 0; // free whole GPUs on nodes that also hold jobs
  std::vector<std::vector<int>> held_;
  std::set<std::pair<double, int>> ends_; // (end, job)
  std::vector<RunningJob> running_view_;
  GpuJobsOutcome out_;
};

void JobsRun::advance(double t)
{
  out_.gpu_seconds_busy += busy_milli_ / 1000.0 * (t - now_);
  out_.fragmented_gpu_seconds += fragmented_ * (t - now_);
  now_ = t;
}

// Free whole GPUs on nodes that run something: a gang needing whole nodes cannot use them.
int fragmented_on(const ClusterGpus& c, int node)
{
  const int whole = c.free_whole[node];
  if (whole == c.gpus_per_node)
    return 0;
  return whole;
}

bool JobsRun::try_start(const QueuedJob& q)
{
  std::vector<int> gpus;
  if (q.gpu_milli < 1000 && q.gpus == 1) {
    if (const int g = c_.best_fit_share(q.gpu_milli); g >= 0)
      gpus = {g};
  } else {
    gpus = placement_.place(c_, q.gpus);
  }
  if (gpus.empty())
    return false;
  std::set<int> nodes, racks;
  for (int g : gpus) {
    const int n = c_.node_of(g);
    fragmented_ -= fragmented_on(c_, n);
    if (c_.free_milli[g] == 1000) {
      --c_.free_whole[n];
      --free_;
    }
    c_.free_milli[g] -= q.gpu_milli;
    fragmented_ += fragmented_on(c_, n);
    nodes.insert(n);
    racks.insert(c_.rack_of_node[n]);
  }
  GpuJobRecord& rec = out_.jobs[q.id];
  rec.start = now_;
  rec.nodes = static_cast<int>(nodes.size());
  rec.racks = static_cast<int>(racks.size());
  rec.slowdown = slowdown_(gpus);
  rec.end = now_ + jobs_[q.id].duration_s * rec.slowdown;
  busy_milli_ += q.gpu_milli * q.gpus;
  held_[q.id] = std::move(gpus);
  ends_.emplace(rec.end, q.id);
  running_view_.push_back(RunningJob{q.gpus, q.gpu_milli, rec.end});
  return true;
}

void JobsRun::finish(int j)
{
  for (int g : held_[j]) {
    const int n = c_.node_of(g);
    fragmented_ -= fragmented_on(c_, n);
    c_.free_milli[g] += jobs_[j].gpu_milli;
    if (c_.free_milli[g] == 1000) {
      ++c_.free_whole[n];
      ++free_;
    }
    fragmented_ += fragmented_on(c_, n);
  }
  busy_milli_ -= jobs_[j].gpu_milli * jobs_[j].gpus;
  held_[j].clear();
}

void JobsRun::refresh_running_view()
{
  running_view_.clear();
  for (const auto& [end, j] : ends_)
    running_view_.push_back(RunningJob{jobs_[j].gpus, jobs_[j].gpu_milli, end});
}

GpuJobsOutcome JobsRun::run(JobScheduler& scheduler)
{
  free_ = total_gpus();
  std::vector<int> order(jobs_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return jobs_[a].submit_s < jobs_[b].submit_s; });
  std::vector<QueuedJob> queue;
  std::size_t next = 0;
  while (next < order.size() || !ends_.empty()) {
    const double arrival = next < order.size() ? jobs_[order[next]].submit_s : 1e300;
    const double t = std::min(arrival, ends_.empty() ? 1e300 : ends_.begin()->first);
    advance(t);
    while (!ends_.empty() && ends_.begin()->first <= t) { // completions first: their GPUs serve the arrivals
      finish(ends_.begin()->second);
      ends_.erase(ends_.begin());
    }
    for (; next < order.size() && jobs_[order[next]].submit_s <= t; ++next) {
      const GpuTraceJob& j = jobs_[order[next]];
      if (static_cast<long long>(j.gpus) > total_gpus()) {
        ++out_.never_fit;
        continue;
      }
      queue.push_back(QueuedJob{order[next], j.submit_s, j.gpus, j.gpu_milli, j.duration_s});
    }
    refresh_running_view();
    ++out_.events;
    std::vector<std::size_t> started = scheduler.schedule(queue, *this);
    std::sort(started.rbegin(), started.rend());
    for (std::size_t i : started)
      queue.erase(queue.begin() + static_cast<long>(i));
    if (queue.empty() == false && ends_.empty() && next >= order.size())
      break; // nothing runs and nothing will arrive: the rest can never start (the scheduler left them)
  }
  out_.makespan = now_;
  return std::move(out_);
}

} // namespace

GpuJobsOutcome simulate_gpu_jobs(const std::vector<GpuTraceJob>& jobs, const PlatformSpec& platform, int gpus_per_node,
                                 JobScheduler& scheduler, const GangPlacement& placement,
                                 const PlacementSlowdown& slowdown)
{
  JobsRun run(jobs, platform, gpus_per_node, placement, slowdown);
  return run.run(scheduler);
}

} // namespace cs
