#include "sim/goodput/long_run.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace cs {
namespace {

double units_of(const LongRunSetup& s, FailureUnit unit)
{
  switch (unit) {
  case FailureUnit::GPU:
    return s.gpus;
  case FailureUnit::HOST:
    return s.nodes;
  case FailureUnit::NIC:
    return s.nics;
  case FailureUnit::FABRIC:
    return s.gpus;
  case FailureUnit::JOB:
    return 1;
  }
  return 0;
}

// The next failure of one cause after `now`: an exponential gap of the cause's rate, or a Weibull gap with the same
// mean (scale = mean / Gamma(1 + 1/k)).
struct CauseClock {
  const FailureCause* cause = nullptr;
  double rate = 0; // per second
  double next = std::numeric_limits<double>::infinity();
};

double draw_gap(std::mt19937_64& rng, double rate, const FailureParams& f)
{
  if (rate <= 0)
    return std::numeric_limits<double>::infinity();
  if (f.law == FailureLaw::EXPONENTIAL)
    return std::exponential_distribution<double>(rate)(rng);
  const double k = f.weibull_shape, scale = 1.0 / (rate * std::tgamma(1.0 + 1.0 / k));
  return std::weibull_distribution<double>(k, scale)(rng);
}

// The job between failures: productive segments of interval_s, each followed by a checkpoint stall. A checkpoint
// becomes durable durable_s after it starts; the progress it holds survives a later failure.
struct Job {
  const LongRunSetup& s;
  double progress = 0;         // productive seconds kept so far
  double in_segment = 0;       // productive seconds since the last checkpoint started
  double stall_left = 0;       // > 0: inside a checkpoint stall
  double pending_progress = 0; // the checkpoint being made durable
  double pending_at = -1;      // when it becomes durable (< 0: none)
  double durable = 0;          // progress of the latest durable checkpoint
  int made_durable = 0;        // checkpoints made durable so far
  // In-memory mode: the copies in persistent storage, taken from host memory at a checkpoint now and then.
  double persistent = 0, persistent_pending = 0, persistent_at = -1, persistent_started = 0;

  // Checkpoints whose write has ended by `t` become durable.
  void settle(double t)
  {
    if (pending_at >= 0 && pending_at <= t) {
      durable = pending_progress;
      pending_at = -1;
      ++made_durable;
    }
    if (persistent_at >= 0 && persistent_at <= t) {
      persistent = persistent_pending;
      persistent_at = -1;
    }
  }

  // A checkpoint starts at `t`; in-memory mode also copies it on to storage when its storage interval has passed.
  void start_checkpoint(double t)
  {
    in_segment = 0;
    stall_left = s.stall_s;
    pending_progress = progress;
    pending_at = t + s.durable_s;
    if (s.in_memory && s.storage_interval_s > 0 && persistent_at < 0 &&
        progress - persistent_started >= s.storage_interval_s) {
      persistent_started = persistent_pending = progress;
      persistent_at = t + s.durable_s + s.storage_durable_s;
    }
  }

  // Runs from `from` to `to` with no failure in between; returns the stall time spent.
  double advance(double from, double to)
  {
    double t = from, stalled = 0;
    while (t < to) {
      settle(t);
      if (stall_left > 0) {
        double d = std::min(stall_left, to - t);
        if (pending_at > t)
          d = std::min(d, pending_at - t);
        stall_left -= d;
        stalled += d;
        t += d;
        continue;
      }
      double d = std::min(s.interval_s - in_segment, to - t);
      if (pending_at > t) // stop where the checkpoint in flight becomes durable
        d = std::min(d, pending_at - t);
      progress += d;
      in_segment += d;
      t += d;
      if (in_segment >= s.interval_s)
        start_checkpoint(t);
    }
    settle(to);
    return stalled;
  }

  // A failure: back to the latest durable checkpoint; returns the work lost.
  double fail()
  {
    const double lost = progress - durable;
    progress = durable;
    in_segment = 0;
    stall_left = 0;
    pending_at = persistent_at = -1;
    return lost;
  }

  // Both in-memory copies of a shard lost: back to the persistent copy; returns the work lost.
  double fall_back()
  {
    durable = persistent_started = persistent;
    return fail();
  }
};

// In-memory checkpoints: nodes whose host memory went with a hardware failure, each with the count of durable
// checkpoints then (a later one copies their shards again). Returns whether `node`'s loss takes a shard with it.
bool loses_shard(std::vector<std::pair<int, int>>& lost_memory, const Job& job, int node, int nodes)
{
  lost_memory.erase(std::remove_if(lost_memory.begin(), lost_memory.end(),
                                   [&job](const std::pair<int, int>& l) { return job.made_durable > l.second; }),
                    lost_memory.end());
  const int partner = checkpoint_peer(node, nodes);
  const bool lost =
      partner != node && std::any_of(lost_memory.begin(), lost_memory.end(),
                                     [partner](const std::pair<int, int>& l) { return l.first == partner; });
  if (lost)
    lost_memory.clear(); // the restart from storage copies every shard again
  else
    lost_memory.emplace_back(node, job.made_durable);
  return lost;
}

} // namespace

int checkpoint_peer(int node, int nodes)
{
  if (nodes < 2)
    return node;
  const int partner = node ^ 1;
  return partner < nodes ? partner : node - 1; // an odd last node joins the pair before it
}

std::map<std::string, double> failure_rates(const LongRunSetup& setup)
{
  std::map<std::string, double> rates;
  for (const auto& c : setup.failures.causes)
    rates[c.name] += c.per_unit_hour * units_of(setup, c.unit) / 3600.0;
  return rates;
}

LongRunOutcome simulate_long_run(const LongRunSetup& s, std::uint64_t seed)
{
  std::mt19937_64 rng(seed);
  const double horizon = s.days * 86400.0;
  std::vector<CauseClock> clocks;
  for (const auto& c : s.failures.causes) {
    CauseClock clock{&c, c.per_unit_hour * units_of(s, c.unit) / 3600.0};
    clock.next = draw_gap(rng, clock.rate, s.failures);
    clocks.push_back(clock);
  }
  std::vector<double> repairs; // when each node out for repair (beyond the spares) comes back
  int spares_free = s.spares;
  std::vector<double> spare_back; // when each spare in use returns to the pool (its node repaired)
  std::vector<std::pair<int, int>> lost_memory;
  LongRunOutcome out;
  Job job{s};
  double t = 0;
  while (t < horizon) {
    auto first = std::min_element(clocks.begin(), clocks.end(),
                                  [](const CauseClock& a, const CauseClock& b) { return a.next < b.next; });
    // A failure that struck while the job was down counts when it comes back up.
    const double at = first == clocks.end() ? horizon : std::max(t, std::min(first->next, horizon));
    out.checkpoint_s += job.advance(t, at);
    t = at;
    if (t >= horizon)
      break;
    const FailureCause& cause = *first->cause;
    first->next = t + draw_gap(rng, first->rate, s.failures);
    ++out.interruptions;
    ++out.by_cause[cause.name];
    double down = 0;
    if (cause.planned) { // drained with a checkpoint first: nothing to redo
      job.durable = job.progress;
      job.fail();
      down = s.failures.planned_duration.value + s.failures.restart.value + s.load_s;
    } else {
      ++out.unexpected;
      double load = s.load_s;
      if (s.in_memory && cause.hardware &&
          loses_shard(lost_memory, job, std::uniform_int_distribution<int>(0, s.nodes - 1)(rng), s.nodes)) {
        ++out.in_memory_losses;
        out.redo_s += job.fall_back();
        load = s.storage_load_s;
      } else {
        out.redo_s += job.fail();
      }
      down = s.failures.detect.value + s.failures.restart.value + load;
      if (cause.hardware) { // the failed node is swapped for a spare, or the job waits for one to come back
        for (auto it = spare_back.begin(); it != spare_back.end();)
          if (*it <= t) {
            ++spares_free;
            it = spare_back.erase(it);
          } else {
            ++it;
          }
        if (spares_free > 0) {
          --spares_free;
          spare_back.push_back(t + s.failures.repair.value);
        } else {
          double wait = s.failures.repair.value; // no spare: the node itself is repaired
          if (!spare_back.empty()) {             // or a spare in repair comes back first
            auto soonest = std::min_element(spare_back.begin(), spare_back.end());
            wait = std::min(wait, *soonest - t);
            *soonest = t + s.failures.repair.value; // that spare goes in; the failed node is repaired behind it
          }
          const double waited = std::max(0.0, wait - s.failures.detect.value);
          down += waited;
          out.spare_wait_s += waited;
        }
      }
    }
    const double resume = std::min(horizon, t + down);
    out.restart_s += resume - t;
    t = resume;
  }
  out.wall_s = horizon;
  out.productive_s = job.progress;
  return out;
}

} // namespace cs
