#include "workloads/mapreduce/mapreduce_sim.hpp"

#include "workloads/mapreduce/mapreduce_run.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs {

MapReduceRun::MapReduceRun(ActorRuntime& runtime, const std::vector<MapReduceJob>& jobs, const PlatformSpec& platform,
                           const MapReduceParams& params, MapReduceScheduler& scheduler, const TopologyCost& cost,
                           std::uint64_t seed, const StragglerModel* stragglers)
    : rt_(runtime), jobs_(jobs), p_(params), scheduler_(scheduler), cost_(cost), rng_(seed), layout_(cost.layout()),
      cluster_(runtime, cost.layout(),
               ClusterRuntime::straggler_hosts(cost.layout().hosts(), params.slow_host_fraction,
                                               params.slow_host_factor, seed),
               stragglers)
{
  containers_per_host_ = p_.containers_per_host > 0 ? p_.containers_per_host : platform.host.cores;
  free_.assign(layout_.hosts(), containers_per_host_);
  state_.resize(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j)
    state_[j].spec = &jobs[j];
  queue_running_.assign(p_.queues.size(), 0);
  out_.containers = containers_per_host_ * layout_.hosts();
  out_.jobs.resize(jobs.size());
}

MapReduceOutcome MapReduceRun::run()
{
  rt_.run(0, [this] { resource_manager(); });
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    out_.jobs[j] = {jobs_[j].submit_s, state_[j].finish, static_cast<int>(jobs_[j].maps.size()), jobs_[j].reduces,
                    state_[j].failed};
    out_.makespan = std::max(out_.makespan, state_[j].finish);
  }
  out_.activities = cluster_.activities();
  return std::move(out_);
}

MapReduceOutcome simulate_mapreduce(ActorRuntime& runtime, const std::vector<MapReduceJob>& jobs,
                                    const PlatformSpec& platform, const MapReduceParams& params,
                                    MapReduceScheduler& scheduler, const TopologyCost& cost, std::uint64_t seed,
                                    const StragglerModel* stragglers)
{
  if (jobs.empty())
    throw std::invalid_argument("no jobs to simulate");
  MapReduceRun run(runtime, jobs, platform, params, scheduler, cost, seed, stragglers);
  return run.run();
}

} // namespace cs
