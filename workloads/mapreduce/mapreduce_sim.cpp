#include "workloads/mapreduce/mapreduce_sim.hpp"

#include "models/dataflow/hdfs_placement.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace cs {

namespace {

struct JobState {
  const MapReduceJob* spec = nullptr;
  bool active = false;
  bool done = false;
  std::vector<char> map_state;                 // 0 pending, 1 running, 2 done
  std::vector<int> map_output_host;            // where a done map's output lies
  std::vector<double> map_started;             // first attempt's start
  std::vector<char> speculated;                // a second attempt was requested
  std::vector<std::vector<ActorPtr>> attempts; // running attempts per map (to kill the loser)
  std::vector<std::vector<int>> maps_on_host;  // pending-map index by replica host (lazily cleaned)
  std::size_t pending_head = 0;                // maps below this index are not pending
  int maps_done = 0, maps_running = 0;
  int reduces_started = 0, reduces_running = 0, reduces_done = 0;
  std::vector<int> done_order; // maps in completion order (reducers fetch from it)
  std::map<int, double> output_on_host;
  std::vector<int> speculative_queue; // maps waiting for a second attempt
  std::vector<ActorPtr> waiting_reducers;
  double map_seconds_sum = 0;
  int map_seconds_n = 0;
  int running_containers = 0;
  double finish = 0;

  int pending_maps() const { return static_cast<int>(spec->maps.size()) - maps_done - maps_running; }
};

class Simulation {
public:
  Simulation(ActorRuntime& runtime, const std::vector<MapReduceJob>& jobs, const PlatformSpec& platform,
             const MapReduceParams& params, MapReduceScheduler& scheduler, const TopologyCost& cost, std::uint64_t seed)
      : rt_(runtime), jobs_(jobs), p_(params), scheduler_(scheduler), cost_(cost), rng_(seed), layout_(cost.layout())
  {
    containers_per_host_ = p_.containers_per_host > 0 ? p_.containers_per_host : platform.host.cores;
    free_.assign(layout_.hosts(), containers_per_host_);
    slow_.assign(layout_.hosts(), 1.0);
    if (p_.slow_host_fraction > 0) {
      std::uniform_real_distribution<double> u(0, 1);
      std::mt19937_64 hosts_rng(seed ^ 0x51f15eedULL);
      for (auto& s : slow_)
        if (u(hosts_rng) < p_.slow_host_fraction)
          s = p_.slow_host_factor;
    }
    state_.resize(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j)
      state_[j].spec = &jobs[j];
    queue_running_.assign(p_.queues.size(), 0);
    out_.containers = containers_per_host_ * layout_.hosts();
    out_.jobs.resize(jobs.size());
  }

  MapReduceOutcome run()
  {
    rt_.run(0, [this] { resource_manager(); });
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      out_.jobs[j] = {jobs_[j].submit_s, state_[j].finish, static_cast<int>(jobs_[j].maps.size()), jobs_[j].reduces};
      out_.makespan = std::max(out_.makespan, state_[j].finish);
    }
    return std::move(out_);
  }

private:
  // ---- the ResourceManager: admits jobs, holds one scheduling round per heartbeat ----
  void resource_manager()
  {
    std::size_t next = 0;
    while (jobs_done_ < jobs_.size()) {
      const double now = rt_.now();
      while (next < jobs_.size() && jobs_[next].submit_s <= now + 1e-12)
        activate(static_cast<int>(next++));
      if (active_.empty()) {
        if (next < jobs_.size())
          rt_.sleep_until(jobs_[next].submit_s);
        else
          rt_.sleep_for(p_.heartbeat.value);
        continue;
      }
      if (p_.speculative)
        request_speculation(now);
      round(now);
      rt_.sleep_for(p_.heartbeat.value);
    }
  }

  void activate(int j)
  {
    auto& s = state_[j];
    const int maps = static_cast<int>(s.spec->maps.size());
    s.active = true;
    s.map_state.assign(maps, 0);
    s.map_output_host.assign(maps, -1);
    s.map_started.assign(maps, 0);
    s.speculated.assign(maps, 0);
    if (p_.speculative)
      s.attempts.resize(maps);
    s.maps_on_host.assign(layout_.hosts(), {});
    for (int m = 0; m < maps; ++m)
      for (int h : s.spec->maps[m].replicas)
        s.maps_on_host[h].push_back(m);
    active_.push_back(j);
  }

  void request_speculation(double now)
  {
    for (int j : active_) {
      auto& s = state_[j];
      if (s.map_seconds_n == 0 || s.maps_running == 0)
        continue;
      std::erase_if(s.speculative_queue, [&](int m) { return s.map_state[m] != 1; });
      const double mean = s.map_seconds_sum / s.map_seconds_n;
      for (std::size_t m = 0; m < s.map_state.size(); ++m)
        if (s.map_state[m] == 1 && !s.speculated[m] && now - s.map_started[m] > p_.speculative_slowdown * mean) {
          s.speculated[m] = 1;
          s.speculative_queue.push_back(static_cast<int>(m));
        }
    }
  }

  struct Candidate {
    int job;
    int task;
    bool map;
    bool speculative;
  };

  void round(double now)
  {
    SchedulingRound r;
    r.now = now;
    int free_total = 0;
    const int hosts = layout_.hosts();
    const int start = std::uniform_int_distribution<int>(0, hosts - 1)(rng_); // heartbeats arrive in any order
    for (int i = 0; i < hosts; ++i) {
      const int h = (start + i) % hosts;
      if (free_[h] > 0) {
        r.offers.push_back({h, free_[h]});
        free_total += free_[h];
      }
    }
    if (free_total == 0)
      return;
    ++out_.rounds;
    for (std::size_t q = 0; q < p_.queues.size(); ++q)
      r.queues.push_back({p_.queues[q].capacity, queue_running_[q]});
    r.total_containers = out_.containers;
    // Candidates: per queue, jobs in FIFO order, until the queue has offered enough tasks to fill every free
    // container a few times over (what a real RM sees: the AMs' outstanding requests, by location).
    std::vector<Candidate> cands;
    std::vector<int> per_queue(p_.queues.size(), 0);
    const int window = 2 * free_total + 8;
    for (int j : active_) {
      auto& s = state_[j];
      const int q = s.spec->queue;
      if (per_queue[q] >= window)
        continue;
      const int before = static_cast<int>(cands.size());
      for (int m : s.speculative_queue)
        if (s.map_state[m] == 1)
          cands.push_back({j, m, true, true});
      // Reducers after slow-start, capped while maps are pending (the AM's reduce ramp-up limit).
      const int maps = static_cast<int>(s.spec->maps.size());
      if (s.reduces_started < s.spec->reduces && s.maps_done >= std::ceil(p_.slowstart * maps - 1e-9)) {
        int allowed = s.spec->reduces - s.reduces_started;
        if (s.maps_done < maps)
          allowed = std::min(allowed, std::max(1, static_cast<int>(p_.reduce_rampup_limit * out_.containers /
                                                                   std::max<std::size_t>(1, active_.size()))) -
                                          s.reduces_running);
        for (int k = 0; k < std::min(allowed, free_total); ++k)
          cands.push_back({j, s.reduces_started + k, false, false});
      }
      // Maps: those with a replica on an offered host first (so locality-aware policies can find them), then the
      // head of the job's list.
      if (s.pending_maps() > 0) {
        ++stamp_;
        if (mark_.size() < static_cast<std::size_t>(maps))
          mark_.resize(maps, 0);
        auto take = [&](int m) {
          if (s.map_state[m] != 0 || mark_[m] == stamp_)
            return false;
          mark_[m] = stamp_;
          cands.push_back({j, m, true, false});
          return true;
        };
        for (const auto& offer : r.offers) {
          auto& list = s.maps_on_host[offer.host];
          int got = 0;
          std::size_t keep = 0;
          for (std::size_t i = 0; i < list.size(); ++i) {
            const int m = list[i];
            if (s.map_state[m] != 0)
              continue; // drop: no longer pending
            list[keep++] = m;
            if (got < offer.free && take(m))
              ++got;
          }
          list.resize(keep);
        }
        while (s.pending_head < s.map_state.size() && s.map_state[s.pending_head] != 0)
          ++s.pending_head;
        int head = 0;
        for (std::size_t m = s.pending_head; m < s.map_state.size() && head < free_total; ++m)
          if (take(static_cast<int>(m)))
            ++head;
      }
      per_queue[q] += static_cast<int>(cands.size()) - before;
    }
    if (cands.empty())
      return;
    // Describe them to the policy.
    std::map<int, std::pair<std::vector<int>, std::vector<double>>> reduce_sources;
    for (const auto& c : cands) {
      const auto& s = state_[c.job];
      CandidateTask t;
      t.job = c.job;
      t.task = c.task;
      t.map = c.map;
      t.queue = s.spec->queue;
      t.submit_s = s.spec->submit_s;
      t.pending_maps_of_job = s.pending_maps();
      if (c.map) {
        t.bytes = s.spec->maps[c.task].input_bytes;
        t.data_hosts = s.spec->maps[c.task].replicas;
      } else {
        // D-hat: each host's map output so far, scaled up by map progress, split over the reducers.
        auto it = reduce_sources.find(c.job);
        if (it == reduce_sources.end()) {
          const double progress = std::max(1e-9, static_cast<double>(s.maps_done) / s.spec->maps.size());
          std::vector<int> hosts_v;
          std::vector<double> bytes_v;
          for (const auto& [h, b] : s.output_on_host) {
            hosts_v.push_back(h);
            bytes_v.push_back(b / progress / s.spec->reduces);
          }
          it = reduce_sources.emplace(c.job, std::make_pair(std::move(hosts_v), std::move(bytes_v))).first;
        }
        t.data_hosts = it->second.first;
        t.data_bytes = it->second.second;
        for (double b : t.data_bytes)
          t.bytes += b;
      }
      r.tasks.push_back(std::move(t));
    }
    SchedulerContext ctx;
    ctx.cost = &cost_;
    ctx.rng = &rng_;
    auto placements = scheduler_.schedule(r, ctx);
    std::vector<char> used(cands.size(), 0);
    for (const auto& pl : placements) {
      if (pl.task < 0 || pl.task >= static_cast<int>(cands.size()) || used[pl.task] || pl.host < 0 ||
          pl.host >= hosts || free_[pl.host] <= 0)
        throw std::logic_error("mapreduce scheduler returned an invalid placement");
      used[pl.task] = 1;
      launch(cands[pl.task], pl.host);
    }
  }

  void take_container(int j, int host)
  {
    --free_[host];
    ++queue_running_[state_[j].spec->queue];
    ++state_[j].running_containers;
  }

  void release_container(int j, int host)
  {
    ++free_[host];
    --queue_running_[state_[j].spec->queue];
    --state_[j].running_containers;
  }

  void launch(const Candidate& c, int host)
  {
    auto& s = state_[c.job];
    take_container(c.job, host);
    if (c.map) {
      if (!c.speculative) {
        s.map_state[c.task] = 1;
        s.map_started[c.task] = rt_.now();
        ++s.maps_running;
      } else {
        auto it = std::find(s.speculative_queue.begin(), s.speculative_queue.end(), c.task);
        if (it != s.speculative_queue.end())
          s.speculative_queue.erase(it);
      }
      auto actor = rt_.spawn("m", host, [this, c, host] { map_attempt(c.job, c.task, host, c.speculative); });
      if (p_.speculative)
        s.attempts[c.task].push_back(actor);
    } else {
      ++s.reduces_started;
      ++s.reduces_running;
      rt_.spawn("r", host, [this, c, host] { reduce_task(c.job, c.task, host); });
    }
  }

  // ---- activities ----
  // Work below a byte or a nanosecond is skipped: SimGrid can leave such activities pending forever.
  static constexpr double kShortest = 1e-9;
  static bool some(double bytes) { return bytes >= 1; }

  ActivityPtr disk_io(int host, double bytes, bool write)
  {
    ++out_.activities;
    return rt_.disk_async(host, bytes, write);
  }
  ActivityPtr flow(int src, int dst, double bytes)
  {
    ++out_.activities;
    return rt_.flow_async(src, dst, bytes);
  }
  void compute(int host, double seconds)
  {
    if (seconds < kShortest)
      return;
    ++out_.activities;
    rt_.compute(seconds * slow_[host]);
  }

  /** Writes `bytes` to HDFS from `host`: local replica plus the replication pipeline (concurrent). */
  void hdfs_write(int job, int host, double bytes)
  {
    if (!some(bytes))
      return;
    const auto replicas = place_block(layout_, host, p_.replication, rng_);
    std::vector<ActivityPtr> acts;
    std::vector<std::size_t> records;
    const double t0 = rt_.now();
    for (std::size_t i = 0; i < replicas.size(); ++i) {
      if (rt_.has_disk(replicas[i]))
        acts.push_back(disk_io(replicas[i], bytes, true));
      if (i > 0) {
        acts.push_back(flow(replicas[i - 1], replicas[i], bytes));
        records.push_back(out_.transfers.size());
        out_.transfers.push_back({TransferKind::OUTPUT, job, replicas[i - 1], replicas[i], bytes, t0, t0});
      }
    }
    for (auto& a : acts)
      rt_.wait(a);
    for (auto i : records)
      out_.transfers[i].end = rt_.now();
  }

  void map_attempt(int j, int m, int host, bool speculative)
  {
    auto& s = state_[j];
    const auto& spec = s.spec->maps[m];
    const double start = rt_.now();
    // Read the nearest replica (ties: the first listed).
    int src = spec.replicas.empty() ? host : spec.replicas.front();
    for (int h : spec.replicas)
      if (cost_.level(h, host) < cost_.level(src, host))
        src = h;
    const std::size_t task_record = out_.tasks.size();
    out_.tasks.push_back({j, true, m, host, cost_.level(src, host), start, start, speculative, false});
    std::size_t read_record = out_.transfers.size();
    out_.transfers.push_back({TransferKind::MAP_READ, j, src, host, spec.input_bytes, start, start});
    {
      std::vector<ActivityPtr> acts;
      if (rt_.has_disk(src) && some(spec.input_bytes))
        acts.push_back(disk_io(src, spec.input_bytes, false));
      if (src != host && some(spec.input_bytes))
        acts.push_back(flow(src, host, spec.input_bytes));
      for (auto& a : acts)
        rt_.wait(a);
    }
    out_.transfers[read_record].end = rt_.now();
    compute(host, spec.compute_s);
    if (s.spec->reduces > 0) {
      if (rt_.has_disk(host) && some(s.spec->map_output_bytes(m)))
        rt_.wait(disk_io(host, s.spec->map_output_bytes(m), true)); // spill
    } else {
      hdfs_write(j, host, s.spec->output_bytes / s.spec->maps.size());
    }
    const double end = rt_.now();
    out_.tasks[task_record].end = end;
    release_container(j, host);
    if (s.map_state[m] == 2) { // another attempt won while this one was finishing
      out_.tasks[task_record].killed = true;
      return;
    }
    s.map_state[m] = 2;
    s.map_output_host[m] = host;
    --s.maps_running;
    ++s.maps_done;
    s.map_seconds_sum += end - s.map_started[m];
    ++s.map_seconds_n;
    s.done_order.push_back(m);
    s.output_on_host[host] += s.spec->map_output_bytes(m);
    if (p_.speculative) {
      for (auto& other : s.attempts[m])
        if (!other->is_self()) {
          kill_attempt(j, m, other);
        }
      s.attempts[m].clear();
    }
    for (auto& r : s.waiting_reducers)
      r->resume();
    s.waiting_reducers.clear();
    if (s.maps_done == static_cast<int>(s.spec->maps.size()) && s.spec->reduces == 0)
      finish_job(j);
  }

  void kill_attempt(int j, int m, const ActorPtr& actor)
  {
    // The loser's record is the last open one for (j, m) on its host; close it and give its container back.
    const int host = actor->host();
    for (auto it = out_.tasks.rbegin(); it != out_.tasks.rend(); ++it)
      if (it->job == j && it->map && it->index == m && it->host == host && it->end == it->start && !it->killed) {
        it->end = rt_.now();
        it->killed = true;
        break;
      }
    actor->kill();
    release_container(j, host);
  }

  void reduce_task(int j, int r, int host)
  {
    auto& s = state_[j];
    const double start = rt_.now();
    const std::size_t task_record = out_.tasks.size();
    out_.tasks.push_back({j, false, r, host, -1, start, start, false, false});
    const int maps = static_cast<int>(s.spec->maps.size());
    std::size_t cursor = 0;
    int fetched = 0;
    struct Fetch {
      int src;
      double bytes;
      int count;
    };
    std::vector<Fetch> queue; // per source host, in host order
    std::size_t queue_head = 0;
    std::vector<ActivityPtr> inflight;
    std::vector<std::pair<std::size_t, int>> inflight_info; // transfer record, map count
    while (fetched < maps) {
      if (cursor < s.done_order.size()) {
        std::map<int, std::pair<double, int>> by_host;
        for (; cursor < s.done_order.size(); ++cursor) {
          const int m = s.done_order[cursor];
          auto& e = by_host[s.map_output_host[m]];
          e.first += s.spec->map_output_bytes(m) / s.spec->reduces;
          ++e.second;
        }
        for (const auto& [src, e] : by_host)
          queue.push_back({src, e.first, e.second});
      }
      while (static_cast<int>(inflight.size()) < p_.parallel_copies && queue_head < queue.size()) {
        const Fetch f = queue[queue_head++];
        if ((f.src == host && !rt_.has_disk(host)) || !some(f.bytes)) { // nothing to move
          fetched += f.count;
          continue;
        }
        const double t0 = rt_.now();
        inflight_info.emplace_back(out_.transfers.size(), f.count);
        out_.transfers.push_back({TransferKind::SHUFFLE, j, f.src, host, f.bytes, t0, t0, f.count});
        if (f.src == host)
          inflight.push_back(disk_io(host, f.bytes, false));
        else
          inflight.push_back(flow(f.src, host, f.bytes));
      }
      if (inflight.empty()) {
        if (fetched >= maps || cursor < s.done_order.size())
          continue;
        s.waiting_reducers.push_back(rt_.self());
        rt_.suspend();
        continue;
      }
      const std::size_t done = rt_.wait_any(inflight);
      out_.transfers[inflight_info[done].first].end = rt_.now();
      fetched += inflight_info[done].second;
      inflight.erase(inflight.begin() + done);
      inflight_info.erase(inflight_info.begin() + done);
    }
    const double partition = s.spec->shuffle_bytes / s.spec->reduces;
    if (rt_.has_disk(host) && some(partition)) // merge pass: the fetched segments are read back from disk
      rt_.wait(disk_io(host, partition, false));
    compute(host, s.spec->reduce_compute_s[r]);
    hdfs_write(j, host, s.spec->output_bytes / s.spec->reduces);
    out_.tasks[task_record].end = rt_.now();
    release_container(j, host);
    --s.reduces_running;
    if (++s.reduces_done == s.spec->reduces)
      finish_job(j);
  }

  void finish_job(int j)
  {
    auto& s = state_[j];
    s.done = true;
    s.finish = rt_.now();
    s.maps_on_host.clear();
    s.maps_on_host.shrink_to_fit();
    active_.erase(std::find(active_.begin(), active_.end(), j));
    ++jobs_done_;
  }

  ActorRuntime& rt_;
  const std::vector<MapReduceJob>& jobs_;
  const MapReduceParams& p_;
  MapReduceScheduler& scheduler_;
  const TopologyCost& cost_;
  std::mt19937_64 rng_;
  const ClusterLayout& layout_;
  int containers_per_host_ = 1;
  std::vector<int> free_;
  std::vector<double> slow_;
  std::vector<JobState> state_;
  std::vector<int> active_; // FIFO: submission order
  std::vector<int> queue_running_;
  std::size_t jobs_done_ = 0;
  std::vector<long> mark_;
  long stamp_ = 0;
  MapReduceOutcome out_;
};

} // namespace

MapReduceOutcome simulate_mapreduce(ActorRuntime& runtime, const std::vector<MapReduceJob>& jobs,
                                    const PlatformSpec& platform, const MapReduceParams& params,
                                    MapReduceScheduler& scheduler, const TopologyCost& cost, std::uint64_t seed)
{
  if (jobs.empty())
    throw std::invalid_argument("no jobs to simulate");
  Simulation sim(runtime, jobs, platform, params, scheduler, cost, seed);
  return sim.run();
}

} // namespace cs
