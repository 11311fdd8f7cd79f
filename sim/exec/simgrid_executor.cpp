#include "sim/exec/executor.hpp"
#include "sim/platform/simgrid_platform.hpp"
#include "sim/runtime/simgrid_session.hpp"

#include <algorithm>
#include <set>
#include <simgrid/s4u.hpp>
#include <stdexcept>

namespace cs {
namespace s4u = simgrid::s4u;

namespace {

// Where one host's incoming transfers land. SimGrid 3.32 files every live Comm::sendto comm (host to host, detached)
// in one list of the maestro's, which std::list::remove scans whole whenever one ends: quadratic in the flows in
// flight. It was 48% of a 1,024-GPU all-to-all's wall time and 36% of a 1 MiB tree all-reduce's over 128 x 8 GPUs.
// A mailbox comm is listed only by the actors at its two ends, so graphs where thousands of streams send give each
// receiving host a mailbox with a permanent receiver: a put to it starts at once, as sendto would (the transfer's
// timing does not depend on the receiver), and the receiver drains the finished comms in the order they were put,
// each match at the front of the mailbox's queue. The tree all-reduce: 1.43 s with sendto, 1.22-1.28 s so; the
// 1 GiB all-to-all the same as with receives posted up front (1.23 against 1.25 s), which had listed up to 512 live
// receives per receiver actor. Graphs with fewer senders keep sendto: its list stays short, and a receiver's gets and
// switches would cost more than they save (the engine bench's rings: 72-78K tasks/s with sendto, 56-58K with
// receivers, over 1,024 devices). Rate-capped transfers always land in an inbox: SimGrid 3.32 keeps Comm::set_rate
// on a mailbox comm and ignores it on sendto (measured: 1 GB capped at 100 MB/s over a 1 GB/s link took 10 s put to
// a mailbox and 1.0 s sent host to host).
struct Inbox {
  s4u::Mailbox* box = nullptr; // null: no transfer lands here (those to this host use sendto)
  int expected = 0;            // transfers that land in this inbox in the whole graph

  void receive_all() const
  {
    for (int i = 0; i < expected; ++i)
      box->get<int>();
    box->set_receiver(nullptr); // a permanent receiver is kept alive by its mailbox otherwise
  }
};

// Shared state of one run. SimGrid actors are cooperative, so plain counters need no locking.
//
// Streams run on pooled actors: a stream gets an actor of its host when its next task is ready and hands it back
// when its next task waits for another stream or it has none left. Actors then number the streams running at once,
// not all streams: a 1 MiB tree all-reduce over 128 x 8 GPUs has about 16,000 streams of a few transfers each, and
// creating and destroying an actor (an 8 MiB stack, a guard page) per stream was a quarter of its wall time.
struct Run {
  const TaskGraph& graph;
  const SimgridPlatform& platform;
  const std::vector<ExecutionObserver*>& observers;
  std::vector<int> pending;       // unfinished predecessors per task
  std::vector<std::size_t> next;  // per stream: index of its next task in stream_tasks
  std::vector<char> running;      // per stream: a worker is on it
  std::vector<int> worker_stream; // per worker: the stream it runs, or -1 when idle
  std::vector<s4u::ActorPtr> workers;
  std::vector<std::vector<int>> idle; // per host: its idle workers
  std::vector<Inbox> inbox;           // per destination host
  bool all_to_inboxes = false;        // every transfer lands in its inbox, not only the rate-capped ones
  double makespan = 0;
  std::size_t done = 0;

  bool ready(int stream) const
  {
    const auto& tasks = graph.stream_tasks(stream);
    return next[stream] < tasks.size() && pending[tasks[next[stream]]] == 0;
  }

  // Puts an idle worker of the stream's host on it, or a new one.
  void dispatch(int stream)
  {
    running[stream] = 1;
    const int host = graph.streams()[stream].host;
    if (!idle[host].empty()) {
      const int w = idle[host].back();
      idle[host].pop_back();
      worker_stream[w] = stream;
      workers[w]->resume();
      return;
    }
    // The worker's slot first: creating an actor from an actor is a simcall, and other actors (dispatching too) run
    // before it returns.
    const int w = static_cast<int>(workers.size());
    worker_stream.push_back(stream);
    workers.emplace_back();
    s4u::ActorPtr actor =
        s4u::Actor::create("worker-" + std::to_string(w), platform.hosts.at(host), [this, w, host] { work(w, host); });
    workers[w] = std::move(actor);
  }

  void work(int w, int host)
  {
    while (true) {
      const int stream = worker_stream[w];
      while (ready(stream))
        run_task(graph.stream_tasks(stream)[next[stream]++]);
      running[stream] = 0;
      worker_stream[w] = -1;
      if (done == graph.size()) { // the last task: the idle workers would wait for ever
        for (auto& queue : idle)
          for (int other : queue)
            workers[other]->kill();
        return;
      }
      idle[host].push_back(w);
      s4u::this_actor::suspend();
    }
  }

  void finish(int id, double start, double end)
  {
    makespan = std::max(makespan, end);
    ++done;
    for (auto* o : observers)
      o->on_task_end(id, start, end);
    auto [begin, last] = graph.successors(id);
    for (const int* s = begin; s != last; ++s) {
      if (--pending[*s] > 0)
        continue;
      const int stream = graph.task(*s).stream;
      if (!running[stream] && ready(stream))
        dispatch(stream);
    }
  }

  void run_task(int id)
  {
    const Task& t = graph.task(id);
    double start = s4u::Engine::get_clock();
    switch (t.kind) {
    case TaskKind::COMPUTE:
      if (t.seconds > 0)
        s4u::this_actor::execute(t.seconds * s4u::this_actor::get_host()->get_speed());
      break;
    case TaskKind::TRANSFER:
      if (t.seconds > 0)
        s4u::this_actor::sleep_for(t.seconds);
      if (t.host == t.dst)
        break;
      {
        static int payload = 0;
        if (all_to_inboxes || t.rate > 0) {
          s4u::CommPtr comm = inbox[t.dst].box->put_init(&payload, static_cast<uint64_t>(t.bytes));
          if (t.rate > 0)
            comm->set_rate(t.rate); // a channel's throughput cap: the flow shares its links up to that rate
          comm->wait();
        } else {
          s4u::Comm::sendto(platform.hosts[t.host], platform.hosts[t.dst], static_cast<uint64_t>(t.bytes));
        }
      }
      break;
    case TaskKind::DELAY:
      if (t.seconds > 0)
        s4u::this_actor::sleep_for(t.seconds);
      break;
    case TaskKind::COLLECTIVE: // lowered before any backend runs (run_backend refuses them)
      break;
    }
    finish(id, start, s4u::Engine::get_clock());
  }
};

/** Whether many streams send to other hosts. */
struct Senders {
  static constexpr int kMany = 4096; // streams that send: thousands of flows in flight
  bool many = false;                 // thousands of streams send: inboxes instead of sendto
};

Senders senders(const TaskGraph& graph)
{
  std::vector<char> sends(graph.streams().size(), 0);
  for (const auto& t : graph.tasks())
    if (t.kind == TaskKind::TRANSFER && t.host != t.dst)
      sends[t.stream] = 1;
  Senders out;
  out.many = std::count(sends.begin(), sends.end(), 1) >= Senders::kMany;
  return out;
}

/** Transfers each host receives from another into its inbox: all of them where many streams send, else the
 *  rate-capped ones. */
std::vector<int> receives(const TaskGraph& graph, int hosts, const Senders& senders)
{
  std::vector<int> n(hosts, 0);
  for (const auto& t : graph.tasks())
    if (t.kind == TaskKind::TRANSFER && t.host != t.dst && (senders.many || t.rate > 0))
      ++n[t.dst];
  return n;
}

/** A host gets an inbox and its receiver where some transfers land in it. */
bool has_inbox(int expected) { return expected > 0; }

/** The actors run_simgrid starts: one per stream with tasks, and the receivers. */
long actors_needed(const TaskGraph& graph, const std::vector<int>& expected)
{
  long n = 0;
  for (std::size_t s = 0; s < graph.streams().size(); ++s)
    n += graph.stream_tasks(static_cast<int>(s)).empty() ? 0 : 1;
  for (int e : expected)
    n += has_inbox(e) ? 1 : 0;
  return n;
}
} // namespace

Timeline run_simgrid(const TaskGraph& graph, const PlatformSpec& platform,
                     const std::vector<ExecutionObserver*>& observers)
{
  if (!graph.finalized())
    throw std::logic_error("run_simgrid needs a finalized task graph");
  // One actor per stream, and the receivers, each stack a mapping (and a guard page a second): a graph of ~32,000
  // streams ran out of Linux's 65,536 mappings per process and SimGrid aborted (a 1 MiB tree all-reduce over 256 x 8
  // GPUs has 63,473). Where one mapping per actor does not fit, the run is refused before it starts.
  const Senders sending = senders(graph);
  const std::vector<int> expected = receives(graph, platform.topology.host_count(), sending);
  const long active = actors_needed(graph, expected), left = simgrid_mappings_left();
  if (active > left)
    throw ActorLimitError(active, left);
  std::set<std::pair<int, int>> pair_set;
  for (const auto& t : graph.tasks())
    if (t.kind == TaskKind::TRANSFER && t.host != t.dst) {
      pair_set.emplace(t.host, t.dst);
      pair_set.emplace(t.dst, t.host); // LV08's cross-traffic loads the reverse route with the ACK flow
    }
  std::vector<std::pair<int, int>> pairs(pair_set.begin(), pair_set.end());
  if (pairs.empty() && platform.topology.host_count() > 1)
    pairs.emplace_back(0, 1); // an empty list means "all pairs"; one route is enough when there is no traffic
  const std::vector<char> never_bind = links_that_never_bind(platform, pairs);

  // Tight timing precision: on the ideal model the backends must agree to 1e-9 relative on contention-free graphs.
  // The max-min solver's own precision is 1e-7, not tighter: at 1e-12 a 16-GPU MoE step (Qwen3-30B-A3B, EP 16 over
  // two nodes) left a constraint with 2.3e-10 of usage and no active flow, and SimGrid aborts the process on that; at
  // 1e-9 a 128-GPU MoE step whose all-to-alls cross 2:1 and 4:1 uplinks (tests/data/oversubscribed-moe-fold.yaml)
  // crashed inside the solver (1e-11 aborted it). LV08's factors and cross-traffic leave more rounding (a 1,024-GPU MoE
  // step aborted in the max-min), so it keeps SimGrid's own.
  const SimgridPrecision precision =
      platform.network_model == NetworkModel::IDEAL ? SimgridPrecision{1e-13, 1e-7} : SimgridPrecision{};
  auto engine = start_simgrid_session(platform.network_model, precision);
  fit_actor_stacks(active, left);
  // Every rate is recomputed at every event (SimGrid's full update), never only the part a completion touches: SimGrid
  // 3.32's lazy update leaves some flows off their max-min share. On one machine, GPU l sending 512 KiB to every
  // GPU m > l, max-min sharing gives the five flows into GPU 6 from GPUs 1 to 5 one rate: the lazy model ended
  // them 14.5 to 21.3 us apart, the full one together at 21.3 (tests/collectives/fluid_all_to_all_v_test.cpp has the
  // case worked out). On a 64-GPU all-to-all over 2:1 uplinks with one pair empty, the lazy model's step was 11% long;
  // on a 128-GPU MoE step behind 2:1 pods, 9% (docs/scale.md). The cost is speed where few flows are in flight at once:
  // a 4-layer 1,024-GPU MoE step took 16.0 s against 12.0 s lazy; the 1,024-GPU all-to-all 2.4-2.5 s against 2.9-3.7 s.
  s4u::Engine::set_config("network/optim:Full");
  SimgridPlatform sg = instantiate_on_simgrid(platform, pairs, never_bind);

  TimelineRecorder recorder(graph.size());
  std::vector<ExecutionObserver*> all{&recorder};
  all.insert(all.end(), observers.begin(), observers.end());
  Run run{graph, sg, all, {}, {}, {}, {}, {}, {}, {}, {}};
  run.all_to_inboxes = sending.many;
  run.inbox.resize(platform.topology.host_count());
  for (std::size_t h = 0; h < run.inbox.size(); ++h) {
    Inbox& in = run.inbox[h];
    in.expected = expected[h];
    if (!has_inbox(in.expected))
      continue;
    in.box = s4u::Mailbox::by_name("inbox-" + std::to_string(h));
    in.box->set_receiver(
        s4u::Actor::create("receiver-" + std::to_string(h), sg.hosts.at(h), [&in] { in.receive_all(); }));
  }
  run.pending.resize(graph.size());
  for (std::size_t t = 0; t < graph.size(); ++t)
    run.pending[t] = graph.predecessor_count(static_cast<int>(t));
  const auto& streams = graph.streams();
  run.next.assign(streams.size(), 0);
  run.running.assign(streams.size(), 0);
  run.idle.resize(sg.hosts.size());
  for (std::size_t s = 0; s < streams.size(); ++s)
    if (run.ready(static_cast<int>(s)))
      run.dispatch(static_cast<int>(s));
  engine->run();
  if (run.done != graph.size())
    throw std::logic_error("simgrid executor stalled with " + std::to_string(graph.size() - run.done) +
                           " tasks not run (a dependency cycle across streams)");
  for (auto* o : all)
    o->on_run_end(run.makespan);
  return std::move(recorder.timeline());
}

} // namespace cs
