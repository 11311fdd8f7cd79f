// The sync-training world on the actor runtime: workers' steps with stragglers, all-reduces within groups, pushes and
// pulls to parameter servers, gossip exchanges; and the record of every model combination for the metrics.
#pragma once

#include "platform/platform_spec.hpp"
#include "platform/stragglers.hpp"
#include "policies/sync_scheme/sync_scheme.hpp"
#include "models/transformer/step_compute.hpp"

#include <vector>

namespace cs {

/** What the run did, for the metrics. */
struct SyncRecord {
  double makespan = 0;
  long long steps = 0;                 // replica steps done
  double contributions = 0;            // gradients that entered a model
  double effective = 0;                // the convergence proxy: contributions discounted by 1 / (1 + staleness)
  double target_time = -1;             // when contributions reached the target (-1 = never)
  std::vector<double> group_sizes;     // per combination
  std::vector<double> staleness;       // per contribution, in global steps (N contributions)
  std::vector<double> compute_s;       // per worker: time computing (its share of pipeline iterations)
  int max_clock_gap = 0;               // ps-ssp: the largest lead over the slowest worker at a step's start
  long long flows = 0;                 // network flows started (simgrid) or priced (analytical)
};

/** One span of a worker's time for the Chrome trace: a step's compute or a synchronisation. */
struct SyncSpan {
  int worker = 0;
  const char* what = "";
  double start = 0, end = 0;
  int group = 0; // workers in the combination (0 for compute)
};

struct SyncSetup {
  const PlatformSpec* platform = nullptr;
  const StragglerModel* stragglers = nullptr;
  StepCompute compute;
  int replicas = 1;
  std::vector<int> worker_host; // replica x stages + stage -> host (GPU)
  std::vector<int> servers;     // parameter-server hosts
  long long budget = 1;         // replica steps in the run
  double target = 0;            // contributions for target_time (0 = none)
  bool flows = true;            // simgrid: real flows; analytical: closed-form times
  std::uint64_t seed = 1;
  bool trace = false;           // keep spans for the Chrome trace
};

class ActorSyncWorld : public SyncWorld {
public:
  ActorSyncWorld(ActorRuntime& runtime, SyncSetup setup);

  ActorRuntime& runtime() override { return runtime_; }
  int workers() const override { return static_cast<int>(setup_.worker_host.size()); }
  int stages() const override { return static_cast<int>(setup_.compute.stages.size()); }
  int host(int worker) const override { return setup_.worker_host.at(worker); }
  std::uint64_t seed() const override { return setup_.seed; }
  bool claim_step(int replica) override;
  void compute(int replica) override;
  void allreduce(const std::vector<int>& members) override;
  void push(int worker) override;
  void pull(int worker) override;
  void exchange(int a, int b) override;
  void record(const std::vector<int>& members, bool staleness_weighted) override;
  void record_clock_gap(int gap) override;

  const SyncRecord& result() const { return record_; }
  const std::vector<SyncSpan>& spans() const { return spans_; }
  /** At most this many spans are kept for the trace (about 200 MB of JSON); later ones are counted, not kept. */
  static constexpr std::size_t kMaxSpans = 2'000'000;
  long long spans_dropped() const { return spans_dropped_; }

private:
  void transfer(const std::vector<int>& src, const std::vector<int>& dst, const std::vector<double>& bytes);
  double bytes_of(int worker) const { return setup_.compute.stages[worker % stages()].sync_bytes; }
  void server_transfer(int worker, bool to_servers);
  void span(int worker, const char* what, double start, int group);

  ActorRuntime& runtime_;
  SyncSetup setup_;
  long long claimed_ = 0;
  std::vector<long long> step_of_; // per replica: its next step index
  std::vector<bool> pending_;      // per worker: a gradient not yet in any model
  std::vector<double> synced_at_;  // per worker: contributions counted when it last received a model
  std::vector<double> server_free_[2]; // analytical: when each server's NIC is free (in, out)
  SyncRecord record_;
  std::vector<SyncSpan> spans_;
  long long spans_dropped_ = 0;
};

} // namespace cs
