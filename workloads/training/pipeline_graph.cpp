#include "workloads/training/pipeline_graph.hpp"
#include "workloads/training/block_split.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace cs {

std::vector<std::vector<int>> stage_dag(const std::vector<StageCost>& costs)
{
  bool any = false;
  std::vector<std::vector<int>> dag;
  for (const auto& c : costs) {
    dag.push_back(c.successors);
    any = any || !c.successors.empty();
  }
  return any ? dag : std::vector<std::vector<int>>{};
}

std::vector<int> segment_order(const StageCost& cost, Pass pass)
{
  std::vector<int> order(cost.segments.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int>(pass == Pass::FORWARD ? i : order.size() - 1 - i);
  return order;
}

namespace {

int pass_index(Pass pass) { return static_cast<int>(pass); } // StageCost::seconds takes the same numbering

double segment_seconds(const Segment& s, Pass pass)
{
  switch (pass) {
  case Pass::FORWARD:
    return s.forward_s;
  case Pass::BACKWARD: // run in pieces only when it reduces gradients as it goes: slowed by the reduction beside it
    return s.backward_s + s.beside_reduce_s;
  case Pass::BACKWARD_INPUT:
    return s.backward_s - s.weight_s;
  default:
    return s.weight_s + s.beside_reduce_s;
  }
}

const char* op_name(Pass pass, bool whole)
{
  switch (pass) {
  case Pass::FORWARD:
    return whole ? "stage_forward" : "forward";
  case Pass::BACKWARD:
    return whole ? "stage_backward" : "backward";
  case Pass::BACKWARD_INPUT:
    return whole ? "stage_backward_input" : "backward_input";
  default:
    return whole ? "stage_backward_weight" : "backward_weight";
  }
}

// Emits op `op` of device d as one task or in pieces; returns its tasks and adds its time to `busy`.
OpTasks emit_op(TaskGraph& g, const PipelineInput& in, int d, const PipelineOp& op, bool pieces, double& busy)
{
  const int vs = in.map.stage(d, op.chunk);
  const StageCost& c = (*in.costs)[vs];
  TaskLabels lab = in.labels;
  lab.stage = vs;
  lab.microbatch = op.microbatch;
  lab.phase = g.intern(op.forward() ? "forward" : "backward");
  const std::string model = c.model.empty() ? "given" : c.model;
  OpTasks out;
  // The extension that claims a segment, or null.
  auto claimant = [&in](const Segment& s) -> TrainingExtension* {
    for (TrainingExtension* e : in.extensions)
      if (e->claims(s))
        return e;
    return nullptr;
  };
  const bool claimed =
      std::any_of(c.segments.begin(), c.segments.end(), [&](const Segment& s) { return claimant(s) != nullptr; });
  if ((!pieces && !claimed) || c.segments.empty()) {
    const double t = c.seconds(pass_index(op.pass));
    out.first = out.last = g.add_compute(in.compute_streams[d], t, op_name(op.pass, true), model, lab);
    busy += t;
    return out;
  }
  // A piece is a run of segments that take no time ended by one that does; trailing ones join the last piece.
  const auto order = segment_order(c, op.pass);
  const int n = static_cast<int>(order.size());
  int begin = 0;
  for (int i = 0; i < n; ++i) {
    const Segment& s = c.segments[order[i]];
    const double t = segment_seconds(s, op.pass);
    if (t <= 0 && (i + 1 < n || !out.pieces.empty()))
      continue;
    lab.layer = s.layer;
    if (TrainingExtension* extension = claimant(s)) {
      const SegmentSite site{in.replica, d, in.compute_streams[d], &op, vs};
      const auto [first, last] = extension->emit(site, s, lab, busy);
      out.pieces.push_back(last);
      out.piece_first.push_back(first);
      out.piece_segments.emplace_back(begin, i + 1);
      begin = i + 1;
      continue;
    }
    out.pieces.push_back(g.add_compute(in.compute_streams[d], t, s.name + "_" + op_name(op.pass, false), model, lab));
    out.piece_first.push_back(out.pieces.back());
    out.piece_segments.emplace_back(begin, i + 1);
    begin = i + 1;
    busy += t;
  }
  if (begin < n)
    out.piece_segments.back().second = n;
  out.first = out.piece_first.front();
  out.last = out.pieces.back();
  return out;
}

// A pass's tasks by (kind of pass, microbatch, virtual stage): 0 forward, 1 the gradient-sending pass, 2 weight.
int key_kind(const PipelineOp& op) { return op.forward() ? 0 : op.sends_gradient() ? 1 : 2; }

// Each op's first and last task by (kind, microbatch, virtual stage), in a flat table: a 2,048-GPU plan's pipeline
// has hundreds of thousands of ops, and a map of them (with their tasks' lists copied in) was a tenth of a planner
// search.
class OpEnds {
public:
  OpEnds(int microbatches, int stages)
      : m_(microbatches), stages_(stages), ends_(std::size_t(3) * microbatches * stages, {-1, -1})
  {}
  void set(int kind, int mb, int vs, const OpTasks& t) { ends_[index(kind, mb, vs)] = {t.first, t.last}; }
  int first(int kind, int mb, int vs) const { return get(kind, mb, vs).first; }
  int last(int kind, int mb, int vs) const { return get(kind, mb, vs).second; }

private:
  std::size_t index(int kind, int mb, int vs) const
  {
    if (mb < 0 || mb >= m_ || vs < 0 || vs >= stages_)
      throw std::out_of_range("append_pipeline: an op outside the schedule's microbatches or stages");
    return (std::size_t(kind) * m_ + mb) * stages_ + vs;
  }
  const std::pair<int, int>& get(int kind, int mb, int vs) const
  {
    const auto& e = ends_[index(kind, mb, vs)];
    if (e.first < 0)
      throw std::out_of_range("append_pipeline: the schedule has no such op");
    return e;
  }
  int m_, stages_;
  std::vector<std::pair<int, int>> ends_;
};

// Per stage: the stages it feeds (bytes per edge) and the stages that feed it; a chain unless the costs give a DAG.
struct Edges {
  std::vector<std::vector<std::pair<int, double>>> next, prev;
};

// `chain_length`: the stages of each chain (several chains: copies of the model, as DualPipe runs); 0 for a DAG.
Edges stage_edges(const std::vector<StageCost>& costs, int chain_length)
{
  const int stages = static_cast<int>(costs.size());
  Edges e;
  e.next.resize(stages);
  e.prev.resize(stages);
  for (int s = 0; s < stages; ++s) {
    if (chain_length > 0) {
      if ((s + 1) % chain_length != 0) {
        e.next[s].emplace_back(s + 1, costs[s].activation_bytes);
        e.prev[s + 1].emplace_back(s, costs[s].activation_bytes);
      }
      continue;
    }
    for (std::size_t i = 0; i < costs[s].successors.size(); ++i) {
      const double bytes = i < costs[s].successor_bytes.size() ? costs[s].successor_bytes[i] : 0.0;
      e.next[s].emplace_back(costs[s].successors[i], bytes);
      e.prev[costs[s].successors[i]].emplace_back(s, bytes);
    }
  }
  return e;
}

// The collectives created since task `task_begin` whose members wait for tasks of `stream`: each stream holding
// their members gets them, at its tail, in the order `position` gives the compute tasks that start them (one
// communication stream, as Megatron-Core's, runs combine (B), dispatch (F), dispatch (B), combine (F) in turn).
void order_started_collectives(TaskGraph& g, int stream, int task_begin, std::size_t edges_begin,
                               const std::vector<int>& position)
{
  const auto& edges = g.edges();
  std::map<int, int> key_of; // collective -> the earliest position of a compute task it waits for
  for (std::size_t e = edges_begin; e < edges.size(); ++e) {
    const auto [a, b] = edges[e];
    if (b < task_begin || a < task_begin || g.task(b).kind != TaskKind::COLLECTIVE || g.task(a).stream != stream)
      continue;
    const int key = position[static_cast<std::size_t>(a - task_begin)];
    auto [it, added] = key_of.emplace(g.task(b).dst, key);
    if (!added)
      it->second = std::min(it->second, key);
  }
  std::set<int> streams;
  for (const auto& [c, key] : key_of)
    for (int m : g.collectives()[static_cast<std::size_t>(c)].members)
      if (m >= task_begin)
        streams.insert(g.task(m).stream);
  for (int s : streams) {
    const auto& st = g.stream_tasks(s);
    std::size_t tail = st.size();
    while (tail > 0 && st[tail - 1] >= task_begin)
      --tail;
    std::vector<std::pair<int, int>> keyed; // (key, task) in stream order
    for (std::size_t k = tail; k < st.size(); ++k) {
      const Task& t = g.task(st[k]);
      const auto it = t.kind == TaskKind::COLLECTIVE ? key_of.find(t.dst) : key_of.end();
      if (it == key_of.end())
        break;
      keyed.emplace_back(it->second, st[k]);
    }
    if (keyed.size() != st.size() - tail)
      continue; // something else was queued there: leave its order as emitted
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<int> order;
    for (const auto& [key, task] : keyed)
      order.push_back(task);
    g.reorder_stream_tail(s, order);
  }
}

// Runs the compute-stream tasks of two paired ops, emitted one after the other from stream position `begin` (the
// second from `mid`), as one op: each op's tasks are cut before every task that waits for another stream (an
// all-to-all, a pipeline input), and the blocks alternate, the backward's first; a pass with fewer waits than the
// other has its blocks cut, by time, to fill the other's. For an MoE layer pair this is
// Megatron-Core's combined 1F1B and DualPipe's overlapped chunk: attention (F) beside combine (B), experts (B)
// beside dispatch (F), experts (F) beside dispatch (B), attention (B) beside combine (F). Reconstructed: the blocks
// pair in order, whatever layers they belong to.
void interleave_pair(TaskGraph& g, int stream, std::size_t begin, std::size_t mid, std::size_t edges_begin,
                     bool first_is_backward, int task_begin)
{
  const auto& st = g.stream_tasks(stream);
  const auto& edges = g.edges();
  std::vector<int> waits;
  for (std::size_t e = edges_begin; e < edges.size(); ++e)
    if (g.task(edges[e].second).stream == stream && g.task(edges[e].first).stream != stream)
      waits.push_back(edges[e].second);
  std::sort(waits.begin(), waits.end());
  auto blocks = [&](std::size_t from, std::size_t to) {
    std::vector<std::vector<int>> out;
    for (std::size_t k = from; k < to; ++k) {
      if (out.empty() || std::binary_search(waits.begin(), waits.end(), st[k]))
        out.emplace_back();
      out.back().push_back(st[k]);
    }
    return out;
  };
  auto first = blocks(begin, mid), second = blocks(mid, st.size());
  auto& backward = first_is_backward ? first : second;
  auto& forward = first_is_backward ? second : first;
  // B1 F1 B2 F2 ...: every wait of the backward needs a forward block after the block before it, and every wait of
  // the forward a backward block.
  auto seconds = [&g](int id) { return g.task(id).seconds; };
  auto nothing = [](std::size_t) {};
  split_longest_blocks(forward, backward.empty() ? 0 : backward.size() - 1, seconds, nothing);
  split_longest_blocks(backward, forward.size(), seconds, nothing);
  std::vector<int> merged;
  for (std::size_t k = 0; k < std::max(backward.size(), forward.size()); ++k) {
    if (k < backward.size())
      merged.insert(merged.end(), backward[k].begin(), backward[k].end());
    if (k < forward.size())
      merged.insert(merged.end(), forward[k].begin(), forward[k].end());
  }
  g.reorder_stream_tail(stream, merged);
  std::vector<int> position(g.size() - static_cast<std::size_t>(task_begin), 0);
  for (std::size_t k = 0; k < merged.size(); ++k)
    position[static_cast<std::size_t>(merged[k] - task_begin)] = static_cast<int>(k);
  order_started_collectives(g, stream, task_begin, edges_begin, position);
}

// Emits device d's ops in its order, a pair of overlapped ops as one (interleave_pair), into `out` and `task_of`.
void emit_device(TaskGraph& g, const PipelineInput& in, int d, PipelineTasks& out, OpEnds& task_of)
{
  const auto& ops = out.order[d];
  const int stream = in.compute_streams[d];
  auto emit_at = [&](std::size_t i, bool pieces) {
    const PipelineOp& op = ops[i];
    OpTasks t = emit_op(g, in, d, op, pieces || (in.in_pieces && in.in_pieces(d, i)), out.busy_s[d]);
    const bool starts = i == 0 || (i == 1 && op.overlap == Overlap::WITH_PREVIOUS); // a pair may lead with either
    if (starts && d < static_cast<int>(in.ready.size()) && in.ready[d] >= 0)
      g.add_dependency(in.ready[d], t.first);
    task_of.set(key_kind(op), op.microbatch, in.map.stage(d, op.chunk), t);
    out.ops[d].push_back(std::move(t));
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].overlap != Overlap::WITH_NEXT || i + 1 == ops.size()) {
      emit_at(i, false);
      continue;
    }
    const std::size_t begin = g.stream_tasks(stream).size(), edges_begin = g.edges().size();
    const int task_begin = static_cast<int>(g.size());
    emit_at(i, true);
    const std::size_t mid = g.stream_tasks(stream).size();
    emit_at(i + 1, true);
    interleave_pair(g, stream, begin, mid, edges_begin, !ops[i].forward(), task_begin);
    ++i;
  }
}

} // namespace

PipelineTasks append_pipeline(TaskGraph& g, StreamPool& pool, const PipelineInput& in)
{
  const StageMap& map = in.map;
  const int p = map.devices(), m = in.microbatches, v = map.chunks();
  const auto& costs = *in.costs;
  if (static_cast<int>(costs.size()) != map.stages() || static_cast<int>(in.hosts.size()) != p)
    throw std::invalid_argument(
        "append_pipeline: costs must have one entry per virtual stage and hosts one per device");
  PipelineTasks out;
  const auto dag = stage_dag(costs);
  if (!dag.empty() && v != 1)
    throw std::invalid_argument("append_pipeline: a stage DAG runs one stage per device");
  out.order = in.order ? *in.order : dag.empty() ? in.schedule->order(p, v, m) : in.schedule->order_dag(dag, m);
  // Create every op's tasks in schedule order per device, then wire the data dependencies.
  OpEnds task_of(m, map.stages());
  out.ops.resize(p);
  out.busy_s.assign(p, 0.0);
  for (int d = 0; d < p; ++d)
    emit_device(g, in, d, out, task_of);
  auto first = [&](int kind, int mb, int vs) { return task_of.first(kind, mb, vs); };
  auto last = [&](int kind, int mb, int vs) { return task_of.last(kind, mb, vs); };
  // Sends are created in each device's op order, on one stream for activations and one for their gradients, so
  // no stream ever has to run a send before one the schedule needs earlier.
  // `then`: the sender's next op's first task (-1: none), which waits for the send when sends block.
  auto link = [&](int before, int from_vs, int after, int to_vs, double bytes, int mb, int channel, int then) {
    const int from_dev = map.device_of(from_vs), to_dev = map.device_of(to_vs);
    if (from_dev == to_dev || bytes <= 0) {
      g.add_dependency(before, after);
      return;
    }
    TaskLabels lab = in.labels;
    lab.stage = from_vs;
    lab.microbatch = mb;
    lab.phase = g.intern("p2p");
    lab.comm = CommKind::P2P;
    const int t =
        g.add_transfer(pool.get(in.hosts[from_dev], channel), in.hosts[from_dev], in.hosts[to_dev], bytes, "p2p", lab);
    g.add_dependency(before, t);
    g.add_dependency(t, after);
    if (in.blocking_sends && then >= 0)
      g.add_dependency(t, then);
  };
  const Edges edges = stage_edges(costs, dag.empty() ? map.chain_length() : 0);
  const auto& next = edges.next;
  const auto& prev = edges.prev;
  for (int d = 0; d < p; ++d)
    for (std::size_t i = 0; i < out.order[d].size(); ++i) {
      const PipelineOp& op = out.order[d][i];
      const int vs = map.stage(d, op.chunk), mb = op.microbatch;
      std::size_t after = op.overlap == Overlap::WITH_NEXT ? i + 2 : i + 1; // the op after its pair
      // Megatron-Core's overlap_p2p_comm waits for a send's handle before the next op of its pass, so an op of the
      // other pass between them runs beside it.
      while (in.sends_wait_same_pass && after < out.order[d].size() && out.order[d][after].forward() != op.forward())
        ++after;
      const int then = after < out.ops[d].size() ? out.ops[d][after].first : -1;
      if (op.forward()) {
        if (next[vs].empty())
          g.add_dependency(last(0, mb, vs), first(1, mb, vs));
        for (const auto& [to, bytes] : next[vs])
          link(last(0, mb, vs), vs, first(0, mb, to), to, bytes, mb, 500, then);
      } else if (op.sends_gradient()) {
        for (const auto& [to, bytes] : prev[vs])
          link(last(1, mb, vs), vs, first(1, mb, to), to, bytes, mb, 501, then);
      } else {
        g.add_dependency(last(1, mb, vs), first(2, mb, vs));
      }
    }
  return out;
}

PipelineGraph build_pipeline(const PipelineSchedule& schedule, int p, int vpp, int m,
                             const std::vector<StageCost>& costs, const std::vector<int>& hosts)
{
  PipelineGraph out;
  out.devices = p;
  out.chunks = schedule.chunks(vpp);
  out.microbatches = m;
  StreamPool pool(out.graph);
  for (int d = 0; d < p && d < static_cast<int>(hosts.size()); ++d)
    out.compute_streams.push_back(out.graph.add_stream(hosts[d], "compute"));
  PipelineInput in;
  in.schedule = &schedule;
  in.map = schedule.stage_map(p, schedule.chunks(vpp));
  in.microbatches = m;
  in.costs = &costs;
  in.hosts = hosts;
  in.compute_streams = out.compute_streams;
  in.labels = TaskLabels{0, -1, -1, -1, 0};
  PipelineTasks tasks = append_pipeline(out.graph, pool, in);
  out.order = std::move(tasks.order);
  out.busy_s = std::move(tasks.busy_s);
  out.graph.finalize(); // throws std::logic_error when the schedule's order contradicts the data dependencies
  return out;
}

double bubble_fraction(const PipelineGraph& p, double iteration_time)
{
  const double busy = *std::max_element(p.busy_s.begin(), p.busy_s.end());
  return busy > 0 ? (iteration_time - busy) / busy : 0.0;
}

std::vector<int> peak_in_flight(const PipelineGraph& p) { return peak_in_flight(p.order); }

} // namespace cs
