#include "models/collectives/lowering.hpp"

#include "models/collectives/all_to_all_chains.hpp"
#include "models/collectives/all_to_all_v.hpp"
#include "models/collectives/collective_model.hpp"
#include "models/collectives/lowering_parts.hpp"
#include "platform/shared_links.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

namespace cs {
namespace {

using lowering_parts::DoneTasks;
using lowering_parts::ExistingStreams;
using lowering_parts::request_of;
using lowering_parts::sizes_sent;

struct Lowering {
  const TaskGraph& in;
  const PlatformSpec& platform;
  CollectivePricing pricing;
  TaskGraph out;
  std::vector<int> pred_start; // per input task: where its predecessors begin in `pred_list` (edges' order kept)
  std::vector<int> pred_list;
  std::vector<DoneTasks> done_of; // per input task
  std::vector<int> entry;         // per collective member: the task its predecessors feed (-1: wired already)
  // Per input stream, the member of the last collective lowered on it (-1: none yet). A stream runs one kernel at a
  // time: NCCL's next collective on a stream starts once the previous one has completed on that rank, every channel
  // and receive of it, not when its own channel-0 sends have.
  std::vector<int> last_member;
  std::vector<int> position; // per input task: its place in the copy order (empty: its id)
  std::map<std::string, StreamPool> pools;
  ExistingStreams existing;
  double closed_form_intra = 0, closed_form_inter = 0, closed_form_tasks = 0;
  // Traffic of a closed-form collective: its expansion's transfers on a scratch graph, expanded once per distinct
  // (kind, algorithm, protocol, root, group) at one size and scaled to the others (every step's payload is a fixed
  // share of the size; the protocol sets the wire bytes per payload byte and the channels): groups repeat every
  // bucket, microbatch and iteration, and a 1,024-rank ring is two million transfers.
  struct Traffic {
    double intra = 0, inter = 0, tasks = 0, bytes = 0;
    std::vector<std::pair<int, double>> links; // link index, bytes over it (at `bytes`)
  };
  std::vector<double> closed_form_links; // per link, what closed-form collectives would move over it
  // All-to-all-v matrices priced by their closed form, summed per group: routed once at the end.
  std::map<std::vector<int>, std::vector<double>> exchanged;

  void add_links(const std::vector<std::pair<int, double>>& links, double factor)
  {
    if (closed_form_links.empty())
      closed_form_links.assign(platform.topology.links().size(), 0.0);
    for (const auto& [link, bytes] : links)
      closed_form_links[link] += bytes * factor;
  }
  // Looked up by references (std::less<>): a key copy was a 1,024-rank group per collective.
  std::map<std::tuple<std::string, std::string, std::string, int, std::vector<int>>, Traffic, std::less<>> traffic;
  // Per shared all-to-all-v matrix (by address: SizeMatrix shares one vector among the collectives that move the same)
  // and group: its closed form, its payload inside machines and between them, and how often a closed form ran it.
  // An MoE step's thousands of all-to-alls repeat a few, and each was a pass over ranks x ranks sizes.
  struct MatrixUse {
    SizeMatrix matrix; // keeps the address alive
    bool transposed = false;
    double seconds = -1, intra = -1, inter = 0, uses = 0;
    std::vector<std::pair<int, double>> switch_bytes{}; // routed once (all_to_all_v_switch_bytes)
    bool routed = false;
  };
  std::map<std::tuple<const std::vector<double>*, bool, std::vector<int>>, MatrixUse, std::less<>> matrix_uses;
  std::vector<std::pair<const std::vector<int>*, const MatrixUse*>> matrix_order; // first use first: addresses vary
  std::optional<AllToAllChains> chains; // the fluid's all-to-alls, per group in lowering order

  MatrixUse& matrix_use(const CollectiveSpec& c)
  {
    const std::vector<double>* sizes = &c.matrix.values();
    auto it = matrix_uses.find(std::tie(sizes, c.transposed, c.hosts));
    if (it == matrix_uses.end()) {
      it = matrix_uses.emplace(std::make_tuple(sizes, c.transposed, c.hosts), MatrixUse{c.matrix, c.transposed}).first;
      matrix_order.emplace_back(&std::get<2>(it->first), &it->second);
    }
    return it->second;
  }
  std::set<std::vector<int>> a2a_groups; // the hosts of every all-to-all-v in the input: the groups built
  // What a replayed all-to-all holds of each link direction between switches while it runs, with its copies, shared
  // among its simulated members (each member's delay holds its part): on the analytical backend another collective's
  // transfers, or another such all-to-all, then move on those links in what it leaves.
  std::vector<std::pair<int, double>> link_shares(const CollectiveSpec& c, MatrixUse& use, double seconds)
  {
    if (!use.routed) {
      // The copies a built group stands for; a copy that is itself built holds its own share.
      if (a2a_groups.empty())
        for (const CollectiveSpec& other : in.collectives())
          if (!other.matrix.empty())
            a2a_groups.insert(other.hosts);
      std::vector<int> shifts{0};
      std::vector<int> moved(c.hosts.size());
      for (int s : disjoint_shifts(c.hosts, in.flow_copies().closed_form_offsets(), platform.topology.host_count())) {
        if (s == 0)
          continue;
        std::transform(c.hosts.begin(), c.hosts.end(), moved.begin(), [s](int h) { return h + s; });
        if (!a2a_groups.count(moved))
          shifts.push_back(s);
      }
      use.switch_bytes = all_to_all_v_switch_bytes(sizes_sent(c), platform, c.hosts, shifts);
      use.routed = true;
    }
    const auto& links = platform.topology.links();
    const double payload = all_to_all_v_protocol().efficiency * seconds * static_cast<double>(c.present.size());
    std::vector<std::pair<int, double>> shares;
    for (const auto& [d, bytes] : use.switch_bytes)
      shares.emplace_back(d, std::min(1.0, bytes / (links[d / 2].bandwidth * payload)));
    return shares;
  }
  // Group shapes by member hosts: the same groups recur every bucket, microbatch and layer.
  std::map<std::vector<int>, GroupShape> shapes;

  const GroupShape& shape_of(const std::vector<int>& hosts)
  {
    auto it = shapes.find(hosts);
    if (it == shapes.end())
      it = shapes.emplace(hosts, group_shape(platform, hosts)).first;
    return it->second;
  }

  // Closed forms where the graph's flows stand for copies (TaskGraph::flow_copies): the inter-node rate each flow of
  // the group's ring gets when its copies share the links with it, by group. Its copies are the group shifted by the
  // flow copies' offsets onto GPUs no copy taken covers (disjoint_shifts): a data-parallel ring over every replica has
  // only the other TP and CP ranks' rings beside it, an expert-data-parallel ring over some replicas also the other
  // EP ranks'. Larger than the NIC: no effect.
  std::map<std::vector<int>, double> shared_rates;

  double shared_rate(const std::vector<int>& hosts, const GroupShape& shape)
  {
    auto it = shared_rates.find(hosts);
    if (it == shared_rates.end()) {
      const auto offsets =
          disjoint_shifts(hosts, in.flow_copies().closed_form_offsets(), platform.topology.host_count());
      const auto flows = ring_flows(platform.topology, hosts, offsets, shape.channels);
      it = shared_rates.emplace(hosts, SharedLinks(platform.topology, flows).slowest_rate()).first;
    }
    return it->second;
  }

  // The chosen algorithm's closed form, its inter-node bandwidth the group's share of the links its copies cross too.
  // NCCL's tuner does not see the other jobs' flows, so the choice stays the uncontended one.
  double closed_form_seconds(const CollectiveSpec& c, const CollectiveChoice& choice, const GroupShape& shape)
  {
    if (in.flow_copies().none() || shape.nodes < 2)
      return choice.seconds;
    const double rate = shared_rate(c.hosts, shape);
    if (!(rate < shape.nic_bw))
      return choice.seconds;
    GroupShape shared = shape;
    shared.nic_bw = rate;
    return collective_time(c.kind, choice.algorithm, choice.protocol, c.bytes, shared);
  }

  Lowering(const TaskGraph& g, const PlatformSpec& platform, CollectivePricing c)
      : in(g), platform(platform), pricing(c), done_of(g.size()), entry(g.size(), -1), existing(g)
  {
    out.reserve(g.size());
    out.set_flow_copies(g.flow_copies());
    last_member.assign(g.streams().size(), -1);
  }

  // run() interned the input's names first, in order, so their indices mean the same in `out`.
  int copy(const Task& t) { return out.add_copy(t); }

  // What member `m` starts after: its one earlier predecessor when that maps to one task, else a zero-length
  // join its predecessors feed once they are all copied.
  int ready_of(int m)
  {
    const int first = pred_start[m], count = pred_start[m + 1] - first;
    if (count == 0)
      return -1;
    const int p0 = pred_list[first];
    const bool earlier = position.empty() ? p0 < m : position[p0] < position[m];
    if (count == 1 && earlier && done_of[p0].size() == 1)
      return done_of[p0].front();
    const int join = out.add_delay(in.task(m).stream, 0.0, "collective-ready", in.task(m).labels);
    entry[m] = join;
    return join;
  }

  // What member `m` starts after once the collective before it on its stream has completed: `ready` alone where
  // that collective ended in one task on the member's own stream (stream order holds it back already), else a
  // zero-length join on both (an expansion's completion is its last transfers on every channel and their join).
  int after_stream(int m, int ready)
  {
    const int stream = in.task(m).stream;
    const int previous = last_member[stream];
    last_member[stream] = m;
    if (previous < 0)
      return ready;
    const DoneTasks& before = done_of[previous];
    if (before.size() == 1 && out.task(before.front()).stream == stream)
      return ready;
    const int join = out.add_delay(stream, 0.0, "collective-ready", in.task(m).labels);
    before.each([&](int t) { out.add_dependency(t, join); });
    if (ready >= 0)
      out.add_dependency(ready, join);
    return join;
  }

  void lower(const CollectiveSpec& c)
  {
    const int n = static_cast<int>(c.hosts.size());
    // Per simulated rank (c.present), what it starts after; with every rank simulated, per rank. Only the present
    // ranks are visited: most of a folded 256-rank all-to-all's are not, and scanning them all was a third of the
    // lowering's own time on a 2,048-GPU MoE step.
    const bool all = static_cast<int>(c.present.size()) == n;
    std::vector<int> ready(c.present.size());
    for (std::size_t k = 0; k < c.present.size(); ++k)
      ready[k] = after_stream(c.members[c.present[k]], ready_of(c.members[c.present[k]]));
    const GroupShape& shape = shape_of(c.hosts);
    if (!c.matrix.empty()) {
      lower_all_to_all_v(c, shape, ready, all);
      return;
    }
    const CollectiveChoice choice = choose_collective(c.kind, c.algorithm, c.bytes, shape);
    if (!all || pricing == CollectivePricing::CLOSED_FORM) {
      const double seconds = n < 2 ? 0.0 : closed_form_seconds(c, choice, shape);
      if (n >= 2 && c.kind != "p2p") {
        const Traffic& t = closed_form_traffic(c, choice);
        // The cached expansion's size to this one's, and once per copy the graph leaves out (CollectiveSpec::copies).
        const double f = t.bytes > 0 ? c.bytes / t.bytes * c.copies : 0.0;
        closed_form_intra += t.intra * f;
        closed_form_inter += t.inter * f;
        closed_form_tasks += t.tasks;
        add_links(t.links, f);
      }
      for (std::size_t k = 0; k < c.present.size(); ++k) {
        const int m = c.members[c.present[k]];
        const int d = out.add_delay(in.task(m).stream, seconds, c.kind + "/closed-form", c.labels);
        if (ready[k] >= 0)
          out.add_dependency(ready[k], d);
        done_of[m].set(d);
      }
      return;
    }
    const CollectiveRequest req = request_of(c, ready);
    auto it = pools.find(c.streams);
    if (it == pools.end())
      it = pools.emplace(c.streams, existing.pool(out, c.streams)).first;
    const auto done = expand_collective(out, it->second, platform, req, choice);
    for (int r = 0; r < n; ++r)
      done_of[c.members[r]].set(done[r]);
  }

  // The traffic a collective's closed form stands for, counted once per copy; no tasks.
  void count_traffic(const CollectiveSpec& c)
  {
    const int n = static_cast<int>(c.hosts.size());
    if (n < 2 || c.kind == "p2p")
      return;
    if (!c.matrix.empty()) {
      count_matrix_traffic(c, matrix_use(c));
      return;
    }
    const CollectiveChoice choice = choose_collective(c.kind, c.algorithm, c.bytes, shape_of(c.hosts));
    const Traffic& t = closed_form_traffic(c, choice);
    const double f = t.bytes > 0 ? c.bytes / t.bytes * c.copies : 0.0;
    closed_form_intra += t.intra * f;
    closed_form_inter += t.inter * f;
    add_links(t.links, f);
  }

  // An all-to-all-v's traffic on the wire, as its flows would move it: payload over the protocol's efficiency.
  void count_matrix_traffic(const CollectiveSpec& c, MatrixUse& use)
  {
    const int n = static_cast<int>(c.hosts.size());
    if (use.intra < 0) {
      const auto machine = machines_of(platform, c.hosts);
      use.intra = 0;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i != j)
            (machine[i] == machine[j] ? use.intra : use.inter) +=
                c.matrix[c.transposed ? std::size_t(j) * n + i : std::size_t(i) * n + j];
    }
    const double wire = c.copies / all_to_all_v_protocol().efficiency;
    closed_form_intra += use.intra * wire;
    closed_form_inter += use.inter * wire;
  }

  // All-to-all-v (MoE dispatch and combine): flows per pair, or per member a delay of its closed form.
  void lower_all_to_all_v(const CollectiveSpec& c, const GroupShape& shape, const std::vector<int>& ready, bool all)
  {
    const int n = static_cast<int>(c.hosts.size());
    if (all && pricing == CollectivePricing::FLOWS && !c.closed_form) {
      auto it = pools.find(c.streams);
      if (it == pools.end())
        it = pools.emplace(c.streams, existing.pool(out, c.streams)).first;
      const auto done = expand_all_to_all_v(out, it->second, platform, request_of(c, ready));
      for (int r = 0; r < n; ++r)
        done_of[c.members[r]].set(done[r]);
      return;
    }
    MatrixUse& use = matrix_use(c); // looked up once: the key holds the group's hosts
    if (use.seconds < 0)
      use.seconds = all_to_all_v_seconds(sizes_sent(c), shape, all_to_all_v_protocol(), machines_of(platform, c.hosts));
    // Where the graph's flows stand for copies, the other groups' and expert-TP ranks' all-to-alls load the switches'
    // links with this one's, and each of the group's all-to-alls starts as the one before left its ranks
    // (docs/scale.md).
    double seconds = use.seconds;
    std::vector<std::pair<int, double>> shares; // of the links between switches, where the replay priced it
    if (!in.flow_copies().none() && shape.nodes >= 2) {
      if (!chains)
        chains.emplace(platform, in.flow_copies().closed_form_offsets());
      const double fabric = chains->next(
          c.hosts, &use, [&] { return sizes_sent(c); }, all_to_all_v_protocol());
      seconds = std::max(seconds, fabric);
      if (fabric > 0)
        shares = link_shares(c, use, seconds);
    }
    count_matrix_traffic(c, use);
    closed_form_tasks += (double(n) * (n - 1) + n) * c.copies;
    ++use.uses; // summed per group at the end: per link, the folded copies run on links of their own, loaded alike
    // Nobody receives before everyone has sent: the members' transfers start once the last member is ready.
    int join = -1;
    for (std::size_t k = 0; k < c.present.size(); ++k) {
      if (join < 0)
        join = out.add_delay(in.task(c.members[c.present[k]]).stream, 0.0, "all-to-all-v/ready", c.labels);
      if (ready[k] >= 0)
        out.add_dependency(ready[k], join);
    }
    for (int r : c.present) {
      const int d = out.add_delay(in.task(c.members[r]).stream, seconds, "all-to-all-v/closed-form", c.labels);
      out.add_dependency(join, d);
      out.set_link_shares(d, shares);
      done_of[c.members[r]].set(d);
    }
  }

  const Traffic& closed_form_traffic(const CollectiveSpec& c, const CollectiveChoice& choice)
  {
    auto it = traffic.find(std::tie(c.kind, choice.algorithm, choice.protocol.name, c.root, c.hosts));
    if (it == traffic.end()) {
      TaskGraph scratch;
      StreamPool pool(scratch, "comm");
      expand_collective(scratch, pool, platform, request_of(c, std::vector<int>(c.hosts.size(), -1)), choice);
      const auto& topo = platform.topology;
      Traffic sum;
      sum.tasks = static_cast<double>(scratch.size());
      sum.bytes = c.bytes;
      std::map<int, double> links;
      for (const Task& t : scratch.tasks())
        if (t.kind == TaskKind::TRANSFER && t.host != t.dst) {
          (topo.vertex(topo.hosts()[t.host]).machine == topo.vertex(topo.hosts()[t.dst]).machine ? sum.intra
                                                                                                 : sum.inter) +=
              t.bytes;
          for (const auto& use : topo.route(t.host, t.dst))
            links[use.link] += t.bytes;
        }
      sum.links.assign(links.begin(), links.end());
      it = traffic.emplace(std::make_tuple(c.kind, choice.algorithm, choice.protocol.name, c.root, c.hosts), sum).first;
    }
    return it->second;
  }

  // What run() under CLOSED_FORM pricing would give as graph size plus closed_form_expansion_tasks, without
  // building the graph (the zero-length joins before members with several predecessors left out).
  double closed_form_size()
  {
    double size = 0; // the copied tasks, then each collective's delays
    for (const Task& t : in.tasks())
      size += t.kind == TaskKind::COLLECTIVE ? 0 : 1;
    for (const CollectiveSpec& c : in.collectives()) {
      const int n = static_cast<int>(c.hosts.size());
      const int present = static_cast<int>(c.present.size());
      size += present;
      if (!c.matrix.empty()) {
        size += present > 0 ? 1 : 0;
        closed_form_tasks += double(n) * (n - 1) + n;
      } else if (n >= 2 && c.kind != "p2p") {
        const CollectiveChoice choice = choose_collective(c.kind, c.algorithm, c.bytes, shape_of(c.hosts));
        closed_form_tasks += closed_form_traffic(c, choice).tasks;
      }
    }
    return size + closed_form_tasks;
  }

  LoweredGraph run()
  {
    for (const auto& s : in.streams())
      out.add_stream(s.host, s.name);
    for (const auto& name : in.names())
      out.intern(name);
    if (out.names().size() != in.names().size())
      throw std::logic_error("lowering: the input's task names are not distinct");
    pred_start.assign(in.size() + 1, 0);
    for (const auto& [a, b] : in.edges())
      ++pred_start[b + 1];
    for (std::size_t i = 0; i < in.size(); ++i)
      pred_start[i + 1] += pred_start[i];
    pred_list.resize(in.edges().size());
    {
      std::vector<int> fill(pred_start.begin(), pred_start.end() - 1);
      for (const auto& [a, b] : in.edges())
        pred_list[fill[b]++] = a;
    }
    std::vector<char> lowered(in.collectives().size(), 0);
    const std::vector<int> order = in.stream_consistent_order(); // keeps every stream's order in `out`
    if (!order.empty())
      position.assign(in.size(), 0);
    for (std::size_t i = 0; i < order.size(); ++i)
      position[order[i]] = static_cast<int>(i);
    for (std::size_t i = 0; i < in.size(); ++i) {
      const int id = order.empty() ? static_cast<int>(i) : order[i];
      const Task& t = in.task(id);
      if (t.kind != TaskKind::COLLECTIVE) {
        done_of[id].set(copy(t));
        continue;
      }
      if (!lowered[t.dst]) {
        lowered[t.dst] = 1;
        lower(in.collectives()[t.dst]);
      }
    }
    // A collective none of whose members is simulated (replica 0 standing for the others) still moves its bytes.
    for (std::size_t c = 0; c < in.collectives().size(); ++c)
      if (!lowered[c])
        count_traffic(in.collectives()[c]);
    for (const auto& [a, b] : in.edges()) {
      const int to = in.task(b).kind == TaskKind::COLLECTIVE ? entry[b] : done_of[b].front();
      if (to < 0)
        continue; // a member's single earlier predecessor was wired as its ready task
      done_of[a].each([&](int from) { out.add_dependency(from, to); });
    }
    for (const auto& [hosts, use] : matrix_order)
      if (use->uses > 0) {
        auto& sum = exchanged[*hosts];
        sum.resize(use->matrix.size(), 0.0);
        const std::size_t n = hosts->size();
        for (std::size_t k = 0; k < use->matrix.size(); ++k) // a transposed use's (i, j) is stored at (j, i)
          sum[k] += use->matrix[use->transposed ? (k % n) * n + k / n : k] * use->uses;
      }
    for (const auto& [hosts, sum] : exchanged) {
      const int n = static_cast<int>(hosts.size());
      std::vector<std::pair<int, double>> links;
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i != j && sum[std::size_t(i) * n + j] > 0)
            for (const auto& use : platform.topology.route(hosts[i], hosts[j]))
              links.emplace_back(use.link, sum[std::size_t(i) * n + j]);
      add_links(links, 1.0);
    }
    LoweredGraph result;
    result.closed_form_link_bytes = std::move(closed_form_links);
    result.task_map.resize(in.size(), -1);
    for (std::size_t id = 0; id < in.size(); ++id)
      if (done_of[id].size() == 1)
        result.task_map[id] = done_of[id].front();
    out.finalize();
    result.graph = std::move(out);
    result.closed_form_intra_bytes = closed_form_intra;
    result.closed_form_inter_bytes = closed_form_inter;
    result.closed_form_expansion_tasks = closed_form_tasks;
    return result;
  }
};

} // namespace

LoweredGraph lower_collectives(const TaskGraph& in, const PlatformSpec& platform, CollectivePricing pricing)
{
  if (in.finalized())
    throw std::logic_error("lower_collectives needs a graph that is not finalized");
  return Lowering(in, platform, pricing).run();
}

double closed_form_lowering_size(const TaskGraph& in, const PlatformSpec& platform)
{
  return Lowering(in, platform, CollectivePricing::CLOSED_FORM).closed_form_size();
}

} // namespace cs
