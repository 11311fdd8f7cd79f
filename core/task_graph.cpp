#include "core/task_graph.hpp"

#include <algorithm>
#include <atomic>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cs {

struct TaskGraph::Csr {
  // 32-bit vertex ids: successor arrays are read as int (same size; signed/unsigned aliasing is allowed).
  using G = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, boost::no_property,
                                               boost::no_property, std::uint32_t, std::uint32_t>;
  G g;
};

const char* comm_kind_name(CommKind kind)
{
  switch (kind) {
  case CommKind::GRADIENT_SYNC:
    return "gradient_sync";
  case CommKind::PARAMETER_GATHER:
    return "parameter_gather";
  case CommKind::P2P:
    return "p2p";
  case CommKind::TENSOR_PARALLEL:
    return "tp";
  case CommKind::EXPERT_ALLTOALL:
    return "expert_alltoall";
  case CommKind::EXPERT_MIGRATION:
    return "expert_migration";
  default:
    return "";
  }
}

namespace {

// Sorts (before, after) pairs of task ids below n as std::sort would, in two counting passes (after, then before,
// stably): a large step's millions of edges sorted by comparison were a tenth of a planner's simulations.
void sort_by_tasks(std::vector<std::pair<int, int>>& edges, std::size_t n)
{
  std::vector<std::pair<int, int>> by_after(edges.size());
  std::vector<std::size_t> start(n + 1);
  auto pass = [&](const std::vector<std::pair<int, int>>& from, std::vector<std::pair<int, int>>& to, auto key) {
    std::fill(start.begin(), start.end(), 0);
    for (const auto& e : from)
      ++start[key(e) + 1];
    for (std::size_t t = 0; t < n; ++t)
      start[t + 1] += start[t];
    for (const auto& e : from)
      to[start[key(e)]++] = e;
  };
  pass(edges, by_after, [](const std::pair<int, int>& e) { return static_cast<std::size_t>(e.second); });
  pass(by_after, edges, [](const std::pair<int, int>& e) { return static_cast<std::size_t>(e.first); });
}

// {0, beside} + {0, others}: every sum, 0 first.
std::vector<int> offset_sums(const std::vector<int>& beside, const std::vector<int>& others)
{
  std::vector<int> out;
  out.reserve((beside.size() + 1) * (others.size() + 1));
  for (int r = -1; r < static_cast<int>(others.size()); ++r)
    for (int b = -1; b < static_cast<int>(beside.size()); ++b)
      out.push_back((r < 0 ? 0 : others[r]) + (b < 0 ? 0 : beside[b]));
  return out;
}

} // namespace

std::vector<int> FlowCopies::all() const { return offset_sums(beside, replicas); }

std::vector<int> FlowCopies::closed_form_offsets() const { return offset_sums(beside, collectives); }

TaskGraph::TaskGraph() { names_.emplace_back(""); }
TaskGraph::~TaskGraph() = default;
TaskGraph::TaskGraph(TaskGraph&&) noexcept = default;
TaskGraph& TaskGraph::operator=(TaskGraph&&) noexcept = default;

std::uint16_t TaskGraph::intern(const std::string& text)
{
  // Linear scan is fine: a workload has a few dozen distinct names.
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == text)
      return static_cast<std::uint16_t>(i);
  if (names_.size() >= 65535)
    throw std::length_error("too many distinct task names");
  names_.push_back(text);
  return static_cast<std::uint16_t>(names_.size() - 1);
}

int TaskGraph::add_stream(int host, const std::string& name)
{
  streams_.push_back(Stream{name, host});
  stream_tasks_.emplace_back();
  return static_cast<int>(streams_.size()) - 1;
}

namespace {
void check_open(bool finalized)
{
  if (finalized)
    throw std::logic_error("task graph is finalized");
}
} // namespace

namespace {
std::atomic<std::size_t> g_task_limit{TaskGraph::kDefaultTaskLimit};
} // namespace

TaskLimitError::TaskLimitError(std::size_t limit, std::string fold)
    : std::length_error("the task graph would hold more than " + std::to_string(limit) + " tasks"), limit_(limit),
      fold_(std::move(fold))
{}

void TaskGraph::set_task_limit(std::size_t limit) { g_task_limit = limit; }
std::size_t TaskGraph::task_limit() { return g_task_limit; }

void TaskGraph::set_compute_seconds(int id, double seconds)
{
  if (tasks_.at(id).kind != TaskKind::COMPUTE || !(seconds >= 0))
    throw std::logic_error("set_compute_seconds: not a compute task, or a negative duration");
  tasks_[id].seconds = seconds;
}

void TaskGraph::push_task(const Task& t)
{
  if (tasks_.size() >= g_task_limit)
    throw TaskLimitError(g_task_limit);
  tasks_.push_back(t);
}

int TaskGraph::add_compute(int stream, double seconds, const std::string& name, const std::string& model,
                           TaskLabels labels)
{
  check_open(finalized_);
  if (!(seconds >= 0))
    throw std::invalid_argument("compute task " + name + " has a negative duration");
  Task t;
  t.kind = TaskKind::COMPUTE;
  t.stream = stream;
  t.host = streams_.at(stream).host;
  t.seconds = seconds;
  t.name = intern(name);
  t.model = intern(model);
  t.labels = labels;
  push_task(t);
  stream_tasks_[stream].push_back(static_cast<int>(tasks_.size()) - 1);
  return static_cast<int>(tasks_.size()) - 1;
}

int TaskGraph::add_transfer(int stream, int src_host, int dst_host, double bytes, const std::string& name,
                            TaskLabels labels, double overhead, double rate)
{
  check_open(finalized_);
  if (!(bytes >= 0) || !(overhead >= 0) || !(rate >= 0))
    throw std::invalid_argument("transfer " + name + " has a negative size, overhead or rate");
  Task t;
  t.kind = TaskKind::TRANSFER;
  t.stream = stream;
  t.host = src_host;
  t.dst = dst_host;
  t.bytes = std::round(bytes); // whole bytes, as SimGrid moves them
  t.seconds = overhead;
  t.rate = rate;
  t.name = intern(name);
  t.labels = labels;
  push_task(t);
  stream_tasks_.at(stream).push_back(static_cast<int>(tasks_.size()) - 1);
  return static_cast<int>(tasks_.size()) - 1;
}

int TaskGraph::add_delay(int stream, double seconds, const std::string& name, TaskLabels labels)
{
  check_open(finalized_);
  Task t;
  t.kind = TaskKind::DELAY;
  t.stream = stream;
  t.host = streams_.at(stream).host;
  t.seconds = seconds;
  t.name = intern(name);
  t.labels = labels;
  push_task(t);
  stream_tasks_[stream].push_back(static_cast<int>(tasks_.size()) - 1);
  return static_cast<int>(tasks_.size()) - 1;
}

int TaskGraph::add_copy(const Task& task)
{
  check_open(finalized_);
  if (task.kind == TaskKind::COLLECTIVE || task.stream < 0 || task.stream >= static_cast<int>(streams_.size()) ||
      task.name >= names_.size() || task.model >= names_.size())
    throw std::invalid_argument("add_copy: a collective, or a stream or name this graph does not have");
  push_task(task);
  const int id = static_cast<int>(tasks_.size()) - 1;
  stream_tasks_[task.stream].push_back(id);
  return id;
}

std::vector<int> TaskGraph::add_collective(CollectiveSpec spec, const std::vector<int>& member_streams,
                                           const std::vector<int>& ready)
{
  check_open(finalized_);
  const std::size_t n = spec.hosts.size();
  if (member_streams.size() != n || (!ready.empty() && ready.size() != n))
    throw std::invalid_argument("a collective needs one stream (and one ready task) per rank");
  if (collectives_.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::length_error("too many collectives");
  const int index = static_cast<int>(collectives_.size());
  const std::uint16_t name = intern(spec.kind);
  spec.members.assign(n, -1);
  spec.present.clear();
  for (std::size_t r = 0; r < n; ++r) {
    if (member_streams[r] < 0)
      continue;
    spec.present.push_back(static_cast<int>(r));
    Task t;
    t.kind = TaskKind::COLLECTIVE;
    t.stream = member_streams[r];
    t.host = streams_.at(member_streams[r]).host;
    t.dst = index;
    t.bytes = spec.bytes;
    t.name = name;
    t.labels = spec.labels;
    push_task(t);
    const int id = static_cast<int>(tasks_.size()) - 1;
    stream_tasks_[member_streams[r]].push_back(id);
    spec.members[r] = id;
    if (!ready.empty() && ready[r] >= 0)
      add_dependency(ready[r], id);
  }
  collectives_.push_back(std::move(spec));
  return collectives_.back().members;
}

void TaskGraph::set_link_shares(int task, std::vector<std::pair<int, double>> shares)
{
  if (task < 0 || task >= static_cast<int>(tasks_.size()) || tasks_[task].kind != TaskKind::DELAY)
    throw std::invalid_argument("link shares belong to a delay task");
  if (!shares.empty())
    link_shares_[task] = std::move(shares);
}

const std::vector<std::pair<int, double>>* TaskGraph::link_shares(int task) const
{
  auto it = link_shares_.find(task);
  return it == link_shares_.end() ? nullptr : &it->second;
}

void TaskGraph::add_dependency(int before, int after)
{
  check_open(finalized_);
  if (before < 0 || after < 0 || before >= static_cast<int>(tasks_.size()) || after >= static_cast<int>(tasks_.size()))
    throw std::out_of_range("dependency on an unknown task");
  if (before == after)
    throw std::logic_error("a task cannot depend on itself");
  edges_.emplace_back(before, after);
}

void TaskGraph::reorder_stream_tail(int stream, const std::vector<int>& tasks)
{
  check_open(finalized_);
  auto& order = stream_tasks_.at(stream);
  if (tasks.size() > order.size())
    throw std::invalid_argument("reorder_stream_tail: more tasks than the stream holds");
  const auto tail = order.end() - static_cast<std::ptrdiff_t>(tasks.size());
  if (!std::is_permutation(tail, order.end(), tasks.begin()))
    throw std::invalid_argument("reorder_stream_tail: the tasks are not the stream's last ones");
  std::copy(tasks.begin(), tasks.end(), tail);
  reordered_ = true;
}

std::vector<int> TaskGraph::stream_consistent_order() const
{
  if (!reordered_)
    return {};
  std::vector<int> order(tasks_.size());
  for (const auto& st : stream_tasks_) {
    std::vector<int> slots(st);
    std::sort(slots.begin(), slots.end());
    for (std::size_t k = 0; k < st.size(); ++k)
      order[slots[k]] = st[k];
  }
  return order;
}

void TaskGraph::finalize()
{
  if (finalized_)
    return;
  const std::size_t n = tasks_.size();
  sort_by_tasks(edges_, n);
  edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
  csr_ = std::make_unique<Csr>();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges(edges_.begin(), edges_.end());
  csr_->g = Csr::G(boost::edges_are_sorted, edges.begin(), edges.end(), n);
  pred_count_.assign(n, 0);
  for (const auto& [a, b] : edges_)
    ++pred_count_[b];
  edges_.clear();
  edges_.shrink_to_fit();

  // Kahn's algorithm over dependencies plus stream order, to detect cycles and fix a topological order.
  std::vector<int> remaining(pred_count_);
  std::vector<int> position_in_stream(n, 0);
  for (const auto& st : stream_tasks_)
    for (std::size_t i = 0; i < st.size(); ++i) {
      position_in_stream[st[i]] = static_cast<int>(i);
      if (i > 0)
        ++remaining[st[i]];
    }
  std::vector<int> ready;
  for (std::size_t t = 0; t < n; ++t)
    if (remaining[t] == 0)
      ready.push_back(static_cast<int>(t));
  topo_order_.clear();
  topo_order_.reserve(n);
  finalized_ = true;
  while (!ready.empty()) {
    int t = ready.back();
    ready.pop_back();
    topo_order_.push_back(t);
    auto [begin, end] = successors(t);
    for (const int* s = begin; s != end; ++s)
      if (--remaining[*s] == 0)
        ready.push_back(*s);
    const auto& st = stream_tasks_[tasks_[t].stream];
    std::size_t next = position_in_stream[t] + 1;
    if (next < st.size() && --remaining[st[next]] == 0)
      ready.push_back(st[next]);
  }
  if (topo_order_.size() != n) {
    finalized_ = false;
    throw std::logic_error("task graph has a cycle (dependencies contradict stream order)");
  }
}

std::pair<const int*, const int*> TaskGraph::successors(int task) const
{
  const auto& fwd = csr_->g.m_forward;
  const auto* begin = fwd.m_column.data() + fwd.m_rowstart[task];
  const auto* end = fwd.m_column.data() + fwd.m_rowstart[task + 1];
  static_assert(sizeof(*begin) == sizeof(int));
  return {reinterpret_cast<const int*>(begin), reinterpret_cast<const int*>(end)};
}

} // namespace cs
