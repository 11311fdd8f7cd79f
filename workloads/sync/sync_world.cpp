#include "workloads/sync/sync_world.hpp"

#include "models/collectives/collective_model.hpp"

#include <algorithm>
#include <map>

namespace cs {

ActorSyncWorld::ActorSyncWorld(ActorRuntime& runtime, SyncSetup setup)
    : runtime_(runtime), setup_(std::move(setup)), step_of_(static_cast<std::size_t>(setup_.replicas), 0),
      pending_(setup_.worker_host.size(), false), synced_at_(setup_.worker_host.size(), 0)
{
  record_.compute_s.assign(setup_.worker_host.size(), 0);
  for (auto& free : server_free_)
    free.assign(setup_.servers.size(), 0);
}

void ActorSyncWorld::span(int worker, const char* what, double start, int group)
{
  if (!setup_.trace || runtime_.now() <= start)
    return;
  if (spans_.size() >= kMaxSpans) {
    ++spans_dropped_;
    return;
  }
  spans_.push_back(SyncSpan{worker, what, start, runtime_.now(), group});
}

bool ActorSyncWorld::claim_step(int)
{
  if (claimed_ >= setup_.budget)
    return false;
  ++claimed_;
  return true;
}

// A replica's step: its stages' speeds scale their work, the slowest random slowdown of its stages delays it, and a
// recorded step time (single-stage workers) replaces the model's.
void ActorSyncWorld::compute(int replica)
{
  const int pp = stages();
  const long long step = step_of_[replica]++;
  const StepCompute& c = setup_.compute;
  const StragglerModel& s = *setup_.stragglers;
  double seconds = 0;
  if (pp == 1) {
    seconds = s.step_seconds(host(replica), step, c.iteration_s({1.0}));
    record_.compute_s[replica] += seconds;
  } else {
    std::vector<double> scale(static_cast<std::size_t>(pp));
    double delay = 0;
    for (int st = 0; st < pp; ++st) {
      const int w = replica * pp + st;
      scale[st] = 1.0 / s.speed(host(w));
      delay = std::max(delay, s.delay(host(w), step));
      record_.compute_s[w] += (c.microbatches * c.stages[st].micro_s + c.stages[st].optimizer_s) * scale[st];
    }
    seconds = c.iteration_s(scale) + delay;
  }
  for (int st = 0; st < pp; ++st)
    pending_[replica * pp + st] = true;
  const double start = runtime_.now();
  runtime_.sleep_for(seconds);
  for (int st = 0; st < pp; ++st)
    span(replica * pp + st, "step", start, 0);
  ++record_.steps;
  record_.makespan = std::max(record_.makespan, runtime_.now());
}

void ActorSyncWorld::transfer(const std::vector<int>& src, const std::vector<int>& dst,
                              const std::vector<double>& bytes)
{
  std::vector<ActivityPtr> flows;
  for (std::size_t i = 0; i < src.size(); ++i)
    if (src[i] != dst[i] && bytes[i] > 0)
      flows.push_back(runtime_.flow_async(src[i], dst[i], bytes[i]));
  record_.flows += static_cast<long long>(flows.size());
  for (const auto& f : flows)
    runtime_.wait(f);
}

// Simgrid: NCCL's rings, one per channel, each crossing between machines at a different GPU (so through a
// different NIC), every rank sending 2(k-1)/k of its share to the next; the flows pay one hop's latency, the rest of
// the ring's 2(k-1) hops are slept. Analytical: the tuner's closed form for the group's shape.
void ActorSyncWorld::allreduce(const std::vector<int>& members)
{
  const std::size_t k = members.size();
  if (k < 2)
    return;
  const PlatformSpec& platform = *setup_.platform;
  std::vector<int> hosts;
  for (int m : members)
    hosts.push_back(host(m));
  std::sort(hosts.begin(), hosts.end());
  const double bytes = bytes_of(members.front());
  const double start = runtime_.now();
  auto spans = [&] {
    for (int m : members)
      span(m, "all-reduce", start, static_cast<int>(k));
  };
  if (!setup_.flows) {
    runtime_.sleep_for(choose_collective("all-reduce", "auto", bytes, group_shape(platform, hosts)).seconds);
    spans();
    return;
  }
  const Topology& t = platform.topology;
  std::map<int, std::vector<int>> by_machine;
  for (int h : hosts)
    by_machine[t.vertex(t.hosts()[h]).machine].push_back(h);
  // The rings need only the group's layout, not the bandwidths group_shape looks up for the closed forms.
  const int nodes = static_cast<int>(by_machine.size());
  const int channels = ring_channels(platform, nodes, static_cast<int>(k) / nodes);
  std::vector<int> src, dst;
  std::vector<double> size;
  for (int c = 0; c < channels; ++c) {
    std::vector<int> ring;
    for (auto& [machine, local] : by_machine) {
      const std::size_t shift = static_cast<std::size_t>(c) * local.size() / channels % local.size();
      ring.insert(ring.end(), local.begin() + static_cast<long>(shift), local.end());
      ring.insert(ring.end(), local.begin(), local.begin() + static_cast<long>(shift));
    }
    for (std::size_t i = 0; i < k; ++i) {
      src.push_back(ring[i]);
      dst.push_back(ring[(i + 1) % k]);
      size.push_back(2.0 * double(k - 1) / double(k) * bytes / channels);
    }
  }
  transfer(src, dst, size);
  runtime_.sleep_for(double(2 * (k - 1) - 1) * t.route_latency(src[0], dst[0]));
  spans();
}

// Each server holds 1/S of the model. Analytical: every server's NIC serves transfers one after another (first come,
// first served) and the worker's own link bounds the whole.
void ActorSyncWorld::server_transfer(int worker, bool to_servers)
{
  const auto& servers = setup_.servers;
  const double shard = bytes_of(worker) / double(servers.size());
  const int h = host(worker);
  if (setup_.flows) {
    std::vector<int> a(servers.size(), h);
    transfer(to_servers ? a : servers, to_servers ? servers : a, std::vector<double>(servers.size(), shard));
    return;
  }
  const Topology& t = setup_.platform->topology;
  const double now = runtime_.now();
  double end = now, remote = 0, link = 0;
  auto& free = server_free_[to_servers ? 0 : 1];
  for (std::size_t i = 0; i < servers.size(); ++i) {
    if (servers[i] == h)
      continue;
    const double bw = t.route_bandwidth(h, servers[i]);
    free[i] = std::max(now, free[i]) + shard / bw;
    end = std::max(end, free[i] + t.route_latency(h, servers[i]));
    remote += shard;
    link = std::max(link, bw);
  }
  if (remote > 0)
    end = std::max(end, now + remote / link);
  runtime_.sleep_until(end);
}

void ActorSyncWorld::push(int worker)
{
  const double start = runtime_.now();
  server_transfer(worker, true);
  span(worker, "push", start, 1);
}

void ActorSyncWorld::pull(int worker)
{
  const double start = runtime_.now();
  server_transfer(worker, false);
  span(worker, "pull", start, 1);
}

void ActorSyncWorld::exchange(int a, int b)
{
  const double bytes = bytes_of(a), start = runtime_.now();
  const Topology& t = setup_.platform->topology;
  if (setup_.flows)
    transfer({host(a), host(b)}, {host(b), host(a)}, {bytes, bytes});
  else if (host(a) != host(b))
    runtime_.sleep_for(bytes / t.route_bandwidth(host(a), host(b)) + t.route_latency(host(a), host(b)));
  span(a, "gossip", start, 2);
}

void ActorSyncWorld::record(const std::vector<int>& members, bool staleness_weighted)
{
  const double n = workers(), before = record_.contributions;
  std::vector<double> tau;
  for (int m : members)
    if (pending_[m])
      tau.push_back((before - synced_at_[m]) / n);
  double weights = 0;
  for (double x : tau)
    weights += 1 / (1 + x);
  for (double x : tau) // staleness-weighted averaging gives a fresher gradient a larger share of the group's update
    record_.effective += staleness_weighted ? double(tau.size()) * (1 / (1 + x)) / weights / (1 + x) : 1 / (1 + x);
  record_.staleness.insert(record_.staleness.end(), tau.begin(), tau.end());
  record_.contributions += double(tau.size());
  for (int m : members) {
    pending_[m] = false;
    synced_at_[m] = record_.contributions;
  }
  record_.group_sizes.push_back(double(members.size()));
  if (setup_.target > 0 && record_.target_time < 0 && record_.contributions >= setup_.target)
    record_.target_time = runtime_.now();
  record_.makespan = std::max(record_.makespan, runtime_.now());
}

void ActorSyncWorld::record_clock_gap(int gap) { record_.max_clock_gap = std::max(record_.max_clock_gap, gap); }

} // namespace cs
