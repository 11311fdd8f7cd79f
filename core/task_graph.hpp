// The static workload: a DAG of compute, transfer and delay tasks, each on an ordered stream, with labels.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cs {

/** COLLECTIVE tasks are one per member of a collective; a lowering pass (models/collectives/lowering.hpp) replaces
 *  them with transfers or closed-form delays before a backend runs the graph. */
enum class TaskKind : std::uint8_t { COMPUTE, TRANSFER, DELAY, COLLECTIVE };

/** Where a task belongs in the workload, for timelines and breakdowns. -1 = not applicable. */
/** What a communication task is for, so that reports can tell traffic apart without reading names. */
enum class CommKind : std::uint8_t {
  NONE,
  GRADIENT_SYNC,
  PARAMETER_GATHER,
  P2P,
  TENSOR_PARALLEL,
  EXPERT_ALLTOALL,
  EXPERT_MIGRATION
};
/** snake_case names for reports: gradient_sync, parameter_gather, p2p, tp, expert_alltoall, expert_migration
 *  ("" for NONE). */
const char* comm_kind_name(CommKind kind);

struct TaskLabels {
  std::int32_t iteration = -1;
  std::int32_t stage = -1;
  std::int32_t microbatch = -1;
  std::int32_t layer = -1;
  std::uint16_t phase = 0; // index into TaskGraph::names()
  CommKind comm = CommKind::NONE;
  std::int32_t bucket = -1; // gradient bucket (gradient sync, ZeRO gathers)
};

/** One task (a COLLECTIVE member keeps its collective's index in `dst`). Compute runs `seconds` on `host`; delay waits
 * `seconds`; transfer waits `seconds` (a fixed software overhead, e.g. a collective step's synchronisation) and then
 * moves `bytes` from `host` to `dst`, at most at `rate` bytes/s when rate > 0 (a per-channel throughput cap). */
struct Task {
  TaskKind kind = TaskKind::COMPUTE;
  std::int32_t stream = -1;
  std::int32_t host = -1;
  std::int32_t dst = -1;
  double seconds = 0;
  double bytes = 0;
  double rate = 0;
  std::uint16_t name = 0;  // index into names(): kernel or transfer name
  std::uint16_t model = 0; // index into names(): which cost model answered ("" for transfers)
  TaskLabels labels;
};

/** An all-to-all-v's sizes (ranks x ranks bytes, row i sent by rank i), shared by the collectives that move the same:
 *  a copy shares, it does not duplicate (an MoE step's thousands of all-to-alls are mostly alike). Read like a const
 *  vector. */
class SizeMatrix {
public:
  SizeMatrix() = default;
  SizeMatrix(std::vector<double> values) // NOLINT(google-explicit-constructor): written like the vector it was
      : values_(std::make_shared<const std::vector<double>>(std::move(values)))
  {}
  const std::vector<double>& values() const { return values_ ? *values_ : empty_values(); }
  operator const std::vector<double>&() const { return values(); } // NOLINT(google-explicit-constructor)
  bool empty() const { return values().empty(); }
  std::size_t size() const { return values().size(); }
  double operator[](std::size_t i) const { return values()[i]; }
  std::vector<double>::const_iterator begin() const { return values().begin(); }
  std::vector<double>::const_iterator end() const { return values().end(); }

private:
  static const std::vector<double>& empty_values()
  {
    static const std::vector<double> none;
    return none;
  }
  std::shared_ptr<const std::vector<double>> values_;
};

/** A collective over a group, before lowering: what it does and which task stands for each member. */
struct CollectiveSpec {
  std::string kind = "all-reduce"; // all-reduce, reduce-scatter, all-gather, broadcast, all-to-all, p2p
  std::string algorithm = "auto";  // a registered algorithm, or the tuner's choice
  double bytes = 0;                // nccl-tests' size
  int root = 0;
  std::vector<int> hosts;       // the group, in rank order
  SizeMatrix matrix;            // all-to-all-v: ranks x ranks bytes, row i sent by rank i (empty: even, by `bytes`)
  bool transposed = false;      // `matrix` read transposed: row i received by rank i (a combine sharing its dispatch's)
  bool closed_form = false;     // priced by its closed form even where the graph's collectives run as flows
  std::vector<int> members;     // per rank: its COLLECTIVE task, or -1 for a rank that is not simulated
  std::vector<int> present;     // the ranks that are simulated, in rank order (a 256-rank all-to-all may have one)
  std::string streams = "comm"; // name prefix of the members' communication streams (channel 0 is "comm")
  TaskLabels labels;
  double copies = 1; // identical collectives this one stands for (symmetric groups folded): its traffic counts so often
};

/** Ranks left out of a graph whose transfers copy the simulated ones, as host offsets: hosts a + o and b + o move the
 *  same bytes at the same time as a transfer from a to b. Where the fabric is shared (an oversubscribed level), a
 *  simulated flow stands for its copies on every link they cross with it. `beside`: the TP and CP ranks of each
 *  simulated rank (their pipeline sends and data-parallel rings run beside TP rank 0's); it applies to every transfer
 *  and closed-form collective. `replicas`: data-parallel replicas folded into replica 0; it applies to what stays
 *  inside one replica (a collective spanning replicas already counts them). Empty: every transfer is alone. */
struct FlowCopies {
  std::vector<int> beside;
  std::vector<int> replicas;
  /** Every other replica's offset, for closed-form collectives: they are delays that do not see one another, so each
   *  takes as copies the same collective of every replica that runs beside it, simulated or not (the lowering keeps
   *  the shifts that land on GPUs of no other copy: disjoint_shifts). */
  std::vector<int> collectives;
  /** No transfer stands for copies. */
  bool empty() const { return beside.empty() && replicas.empty(); }
  /** Nothing stands for copies, closed-form collectives included. */
  bool none() const { return empty() && collectives.empty(); }
  /** Every offset a transfer inside one replica stands for, 0 (itself) first: {0, beside} + {0, replicas}. */
  std::vector<int> all() const;
  /** The offsets a closed-form collective's copies may sit at, 0 first: {0, beside} + {0, collectives}. */
  std::vector<int> closed_form_offsets() const;
};

/** A stream runs its tasks one at a time in the order they were added (a CUDA stream, a NIC queue). */
struct Stream {
  std::string name; // e.g. "compute", "comm"
  std::int32_t host = -1;
};

/** Thrown when a graph would grow past TaskGraph::task_limit(): the run is refused before memory runs out. */
class TaskLimitError : public std::length_error {
public:
  /** `fold`: what the workload says of simulating fewer ranks (which fold would apply, or why none does); "" when
   *  it says nothing. */
  explicit TaskLimitError(std::size_t limit, std::string fold = "");
  std::size_t limit() const { return limit_; }
  const std::string& fold() const { return fold_; }

private:
  std::size_t limit_;
  std::string fold_;
};

/** The task DAG. Tasks are added in any order; `finalize()` freezes it into compressed successor lists
 *  (a Boost.Graph CSR) and checks that task dependencies plus stream order have no cycle. */
class TaskGraph {
public:
  TaskGraph();
  ~TaskGraph();
  TaskGraph(TaskGraph&&) noexcept;
  TaskGraph& operator=(TaskGraph&&) noexcept;

  /** Most tasks any graph may hold (process-wide; about 120 bytes each with their edges). Default kDefaultTaskLimit;
   *  `clustersim run --max-tasks` changes it. */
  static constexpr std::size_t kDefaultTaskLimit = 30'000'000;
  static void set_task_limit(std::size_t limit);
  static std::size_t task_limit();

  int add_stream(int host, const std::string& name);
  /** Room for `tasks` tasks without regrowing (a lowering knows its input's size). */
  void reserve(std::size_t tasks) { tasks_.reserve(tasks); }
  int add_compute(int stream, double seconds, const std::string& name, const std::string& model, TaskLabels labels);
  /** Changes a compute task's duration (stragglers: durations are not structure, so a finalized graph allows it). */
  void set_compute_seconds(int id, double seconds);
  int add_transfer(int stream, int src_host, int dst_host, double bytes, const std::string& name, TaskLabels labels,
                   double overhead = 0, double rate = 0);
  int add_delay(int stream, double seconds, const std::string& name, TaskLabels labels);
  /** A copy of another graph's compute, transfer or delay task, on the same stream id, whose name and model indices
   *  mean the same here (a graph that interned the other's names() first, in order): a lowering copies most of its
   *  input so, without looking its names up again. */
  int add_copy(const Task& task);
  /** A collective over spec.hosts: one COLLECTIVE task per rank whose stream is given (`member_streams[r]` >= 0),
   *  each after `ready[r]` (-1 = none; empty = none). Returns the member tasks per rank (-1 where not simulated);
   *  what a member's consumers wait for is its task. */
  std::vector<int> add_collective(CollectiveSpec spec, const std::vector<int>& member_streams,
                                  const std::vector<int>& ready);
  const std::vector<CollectiveSpec>& collectives() const { return collectives_; }
  /** The collective a COLLECTIVE task belongs to. */
  const CollectiveSpec& collective_of(int task) const { return collectives_.at(tasks_.at(task).dst); }
  /** Dependencies as added (before finalize). */
  const std::vector<std::pair<int, int>>& edges() const { return edges_; }
  /** `after` may start only once `before` has ended. */
  void add_dependency(int before, int after);
  /** Replaces the last `tasks.size()` tasks of `stream`'s order with `tasks`, a permutation of them: a schedule that
   *  interleaves two passes (Megatron's combined 1F1B, DualPipe) runs their kernels in an order other than the one
   *  they were emitted in. Throws std::invalid_argument unless `tasks` permutes that tail. */
  void reorder_stream_tail(int stream, const std::vector<int>& tasks);
  /** Every task id once, each stream's tasks in its order: each stream's tasks fill that stream's id slots in stream
   *  order. Empty when no stream was reordered (the ids in increasing order then). Copies of the graph (the
   *  collective lowering) add tasks in this order so that they keep every stream's order. */
  std::vector<int> stream_consistent_order() const;
  /** What a delay task holds of the links between switches while it runs (a closed-form all-to-all with its copies):
   *  per link direction (2 * link + (up ? 0 : 1)), the share of its capacity. The analytical backend runs it in what
   *  else holding the links leaves (its pace scaled down until its work at full shares is done), and transfers in
   *  what it leaves; SimGrid runs it as a plain delay. */
  void set_link_shares(int task, std::vector<std::pair<int, double>> shares);
  /** The task's link shares; null where it holds none. */
  const std::vector<std::pair<int, double>>* link_shares(int task) const;
  bool has_link_shares() const { return !link_shares_.empty(); }
  /** The flows each transfer stands for beside itself (none by default); copies of the graph keep them. */
  void set_flow_copies(FlowCopies copies) { flow_copies_ = std::move(copies); }
  const FlowCopies& flow_copies() const { return flow_copies_; }
  /** Interns a label string (phase, kernel, model names). */
  std::uint16_t intern(const std::string& text);

  /** Freezes the graph; throws std::logic_error on a cycle. Queries below need it. */
  void finalize();
  bool finalized() const { return finalized_; }

  std::size_t size() const { return tasks_.size(); }
  const Task& task(int id) const { return tasks_[id]; }
  const std::vector<Task>& tasks() const { return tasks_; }
  const std::vector<Stream>& streams() const { return streams_; }
  const std::vector<std::string>& names() const { return names_; }
  /** Tasks of `stream` in execution order. */
  const std::vector<int>& stream_tasks(int stream) const { return stream_tasks_[stream]; }
  /** Successors of `task`: [begin, end) into a shared array. */
  std::pair<const int*, const int*> successors(int task) const;
  int predecessor_count(int task) const { return pred_count_[task]; }
  /** Task ids in an order that respects dependencies and stream order. */
  const std::vector<int>& topological_order() const { return topo_order_; }

private:
  void push_task(const Task& t);
  std::vector<Task> tasks_;
  std::vector<Stream> streams_;
  std::vector<std::vector<int>> stream_tasks_;
  std::vector<std::string> names_;
  std::vector<std::pair<int, int>> edges_;
  std::vector<CollectiveSpec> collectives_;
  FlowCopies flow_copies_;
  std::map<int, std::vector<std::pair<int, double>>> link_shares_; // by task: few (closed-form all-to-alls)
  struct Csr;
  std::unique_ptr<Csr> csr_;
  std::vector<int> pred_count_;
  std::vector<int> topo_order_;
  bool finalized_ = false;
  bool reordered_ = false;
};

} // namespace cs
