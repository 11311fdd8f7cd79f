#include "models/dataflow/cluster_runtime.hpp"

#include "models/dataflow/hdfs_placement.hpp"

namespace cs {

ClusterRuntime::ClusterRuntime(ActorRuntime& actors, const ClusterLayout& layout, std::vector<double> slowdown,
                               const StragglerModel* stragglers)
    : rt_(actors), layout_(layout), slowdown_(std::move(slowdown)), stragglers_(stragglers),
      computations_(slowdown_.size(), 0)
{}

ActivityPtr ClusterRuntime::disk_io(int host, double bytes, bool write)
{
  ++activities_;
  return rt_.disk_async(host, bytes, write);
}

ActivityPtr ClusterRuntime::flow(int src, int dst, double bytes)
{
  ++activities_;
  return rt_.flow_async(src, dst, bytes);
}

void ClusterRuntime::read_from(int src, int dst, double bytes, std::vector<ActivityPtr>& started)
{
  if (!some(bytes))
    return;
  if (rt_.has_disk(src))
    started.push_back(disk_io(src, bytes, false));
  if (src != dst)
    started.push_back(flow(src, dst, bytes));
}

void ClusterRuntime::compute(int host, double seconds)
{
  if (seconds < kShortest)
    return;
  ++activities_;
  if (!stragglers_) {
    rt_.compute(seconds * slowdown_[host]);
    return;
  }
  const double delay = stragglers_->delay(host, computations_[host]++);
  if (delay > 0)
    rt_.sleep_for(delay);
  rt_.compute(seconds * slowdown_[host] / stragglers_->speed(host));
}

void ClusterRuntime::hdfs_write(int host, double bytes, int replication, std::mt19937_64& rng,
                                const std::function<void(int, int)>& on_flow)
{
  if (!some(bytes))
    return;
  const auto replicas = place_block(layout_, host, replication, rng);
  std::vector<ActivityPtr> acts;
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    if (rt_.has_disk(replicas[i]))
      acts.push_back(disk_io(replicas[i], bytes, true));
    if (i > 0) {
      acts.push_back(flow(replicas[i - 1], replicas[i], bytes));
      on_flow(replicas[i - 1], replicas[i]);
    }
  }
  for (auto& a : acts)
    rt_.wait(a);
}

std::vector<double> ClusterRuntime::straggler_hosts(int hosts, double fraction, double factor, std::uint64_t seed)
{
  std::vector<double> slow(hosts, 1.0);
  if (fraction > 0) {
    std::uniform_real_distribution<double> u(0, 1);
    std::mt19937_64 hosts_rng(seed ^ 0x51f15eedULL);
    for (auto& s : slow)
      if (u(hosts_rng) < fraction)
        s = factor;
  }
  return slow;
}

} // namespace cs
