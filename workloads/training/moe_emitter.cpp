#include "workloads/training/moe_emitter.hpp"

#include "models/collectives/all_to_all_v.hpp"
#include "models/collectives/collective_algorithm.hpp"
#include "models/moe/token_dispatcher.hpp"
#include "models/transformer/transformer.hpp"
#include "workloads/training/beside_communication.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace cs {

MoeEmitter::MoeEmitter(const TrainingPlan& plan, TaskGraph& graph)
    : plan_(plan), graph_(graph), dispatch_streams_(graph, "a2a"), combine_streams_(graph, "a2a-combine"),
      expert_(plan.params->model, *plan.cost, plan.params->framework, plan.parallel.expert_tp()),
      ahead_(*plan.routing, kDrawAhead * 64)
{
  ep_ = plan.parallel.ep;
  replicas_ = plan.parallel.ep_replicas();
  fold_ = ep_ / replicas_;
  groups_ = plan.parallel.dp / replicas_;
  built_ = plan.replicas_to_build();
  copies_ = double(groups_) / ((built_ + replicas_ - 1) / replicas_); // groups each built group stands for
  counts_groups_ = plan.replicas_built > 0 || plan.slowest_rank;
  if (counts_groups_) // an EP group fold: the other groups are counted one by one (count_group)
    copies_ = 1;
  asking_groups_ = counts_groups_ ? groups_ : (built_ + replicas_ - 1) / replicas_;
  const auto& batch = plan.params->batch;
  microbatches_ = std::max(1, batch.global / std::max(1, plan.parallel.dp * batch.micro));
}

int MoeEmitter::routed_as(int group) const
{
  const int g = plan_.routing_group;
  return group == 0 ? g : group == g ? 0 : group;
}

RoutingRequest MoeEmitter::request(int it, int layer, int mb, int group) const
{
  const ModelParams& model = plan_.params->model;
  RoutingRequest q;
  q.iteration = it;
  q.layer = layer;
  q.microbatch = mb;
  q.group = routed_as(group);
  q.ranks = ep_;
  q.samples_per_rank = plan_.params->batch.micro;
  q.tokens_per_sample = model.seq / double(plan_.parallel.ep_fold()) / plan_.parallel.cp;
  q.experts = model.moe.experts;
  q.top_k = model.moe.top_k;
  q.seed = plan_.seed;
  q.rank_totals = !plan_.moe->reads_samples();
  q.rank_blocks = plan_.moe->block_sums_only(model.moe.experts, ep_, model.moe.capacity_factor);
  return q;
}

// EP rank k of a group: replica group * replicas_ + k / fold_, and inside it EP rank k % fold_ of its cp x tp / etp:
// CP rank (k % fold_) / (tp / etp), TP rank (k % fold_) % (tp / etp) x etp, the first of its etp TP ranks (only CP
// rank 0's TP rank 0 is simulated; the others are EP ranks too, with their own share of the sequence).
const std::vector<int>& MoeEmitter::group_hosts(int group, int device) const
{
  auto& hosts = hosts_[{group, device}];
  if (hosts.empty())
    hosts = plan_.parallel.ep_group(group, device);
  return hosts;
}

MoeContext MoeEmitter::context(int group, int device) const
{
  const ModelParams& model = plan_.params->model;
  const double e = dtype_bytes(model.dtype), etp = plan_.parallel.expert_tp();
  const auto hosts = group_hosts(group, device);
  const GroupShape shape = group_shape(*plan_.platform, hosts);
  const auto machines = machines_of(*plan_.platform, hosts);
  MoeContext c;
  c.ranks = ep_;
  c.experts = model.moe.experts;
  c.top_k = model.moe.top_k;
  c.samples_per_rank = plan_.params->batch.micro;
  c.tokens_per_sample = model.seq / double(plan_.parallel.ep_fold()) / plan_.parallel.cp; // a CP rank routes 1/cp
  c.capacity_factor = model.moe.capacity_factor;
  c.hidden = model.hidden;
  // Each TP rank dispatches its 1/etp slice of the hidden vector of every token its EP rank routes (the other ranks,
  // not simulated, move the rest on their own links): with etp = tp, 1/tp of every token; under MoE parallel folding
  // (etp < tp) the EP rank's etp/tp of the sequence (etp = 1: whole hidden vectors of 1/tp of it).
  c.token_bytes = model.hidden * e / etp;
  c.expert_parameters = expert_parameters(model) / etp;
  c.expert_weight_bytes = c.expert_parameters * e;
  c.expert_state_bytes = c.expert_parameters * (2 * e + 12.0); // weights, gradients, Adam's fp32 state
  c.machine = machines;
  const ExpertCost* expert = &expert_;
  c.expert_seconds = [expert](double tokens) { return expert->of(tokens).forward; };
  c.alltoall_seconds = [shape, machines](const std::vector<double>& bytes) {
    return all_to_all_v_seconds(bytes, shape, all_to_all_v_protocol(), machines);
  };
  c.broadcast_seconds = [shape](double bytes) {
    return shape.ranks < 2 ? 0.0 : choose_collective("broadcast", "auto", bytes, shape).seconds;
  };
  c.move_seconds = [shape](double bytes) {
    const double rate = shape.nodes > 1 ? per_gpu_inter_bandwidth(shape) : shape.intra_bw;
    return rate > 0 ? (shape.nodes > 1 ? shape.inter_lat : shape.intra_lat) + bytes / rate : 0.0;
  };
  return c;
}

const MoeEmitter::Step& MoeEmitter::step(int it, int layer, int mb, int group, int device)
{
  const auto key = std::make_tuple(it, layer, mb, group);
  auto found = steps_.find(key);
  if (found != steps_.end())
    return *found->second;
  const bool invariant = plan_.routing->same_for_every_step() && plan_.moe->ranks_alike();
  if (auto reuse = reused_.find(group); invariant && reuse != reused_.end()) {
    account(*reuse->second, layer);
    return *(steps_[key] = reuse->second);
  }
  const ModelParams& model = plan_.params->model;
  // The same layer's steps for the next microbatches, in every group that asks for its steps, are drawn beside this
  // one, unless it was drawn ahead itself (nor where one step stands for every step: it is drawn once).
  RoutingAhead::Ahead next;
  for (int m = mb; !invariant && !ahead_.holds(key) && m < std::min(microbatches_, mb + kDrawAhead); ++m)
    for (int g = 0; g < asking_groups_; ++g)
      if (const auto k = std::make_tuple(it, layer, m, g); k != key && !steps_.count(k) && !ahead_.holds(k))
        next.emplace_back(k, request(it, layer, m, g));
  MoeContext c = context(group, device);
  c.iteration = it;
  c.layer = layer;
  c.microbatch = mb;
  c.group = routed_as(group);
  Step st;
  st.plan = plan_.moe->plan(c, ahead_.take(key, request(it, layer, mb, group), next));
  const DispatchGroup dispatch_group{ep_, c.machine, model.moe.experts, model.moe.top_k, model.moe.max_nodes_per_token};
  st.traffic = sizes_.share(token_dispatcher(model.moe.dispatcher).traffic(st.plan.dispatch, dispatch_group));
  const int n = std::max(1, st.plan.partitions);
  st.plan.partitions = n;
  st.chunks.assign(ep_, std::vector<PieceTimes>(n));
  std::vector<double> tokens;
  for (int r = 0; r < ep_; ++r) {
    // Priced where a simulated rank runs it (its replica built, its replica's first TP rank), or where the slowest
    // rank's is taken: a group that is only counted needs its traffic alone.
    const bool simulated = r % fold_ == 0 && group * replicas_ + r / fold_ < built_;
    if (!simulated && !(plan_.slowest_rank && group == 0 && r % fold_ == 0))
      continue;
    tokens.clear();
    for (double t : st.plan.tokens[r])
      tokens.push_back(t * st.plan.compute_scale / n);
    st.chunks[r].assign(n, expert_.of_gpu(tokens));
  }
  if (plan_.slowest_rank && group == 0)
    take_slowest_rank(st, device);
  const double shadow = st.plan.shadow_bytes > 0 ? c.broadcast_seconds(st.plan.shadow_bytes) : 0.0;
  st.shadow_s.assign(ep_, shadow);
  const auto loads = rank_loads(st.plan);
  const double mean = std::accumulate(loads.begin(), loads.end(), 0.0) / loads.size();
  st.imbalance = mean > 0 ? *std::max_element(loads.begin(), loads.end()) / mean : 1.0;
  // What the emission no longer reads: per (rank, expert) tokens and the dispatch matrix, now in chunks and traffic
  // (kept, they were most of a 2,048-GPU step's memory).
  std::vector<std::vector<double>>().swap(st.plan.tokens);
  std::vector<double>().swap(st.plan.dispatch);
  const Step* kept = &step_store_.emplace_back(std::move(st));
  steps_.emplace(key, kept);
  if (invariant)
    reused_.emplace(group, kept);
  account(*kept, layer);
  return *kept;
}

void MoeEmitter::take_slowest_rank(Step& st, int device) const
{
  // Of the ranks a run with every replica simulates (each replica's first TP rank), per chunk and pass, each at its
  // own speed: the ranks of the group whose routing this is (group 0 runs plan.routing_group's). The fold runs
  // replica 0 at the slowest speed of its stage in any replica (training_stragglers), so the slowest rank's time is
  // given back in work at that speed.
  const StragglerModel* speeds = plan_.device_speeds && plan_.device_speeds->any() ? plan_.device_speeds : nullptr;
  const auto& hosts = group_hosts(routed_as(0), device);
  double floor = std::numeric_limits<double>::infinity(); // the fold's speed for replica 0 here
  for (int r = 0; speeds && r < plan_.parallel.dp; ++r)
    floor = std::min(floor, speeds->speed(plan_.parallel.host(r, device)));
  auto at_floor = [&](double work, int k) { return speeds ? work * floor / speeds->speed(hosts[k]) : work; };
  auto& slowest = st.chunks[0];
  double &forward = st.plan.extra_forward_s[0], &backward = st.plan.extra_backward_s[0];
  for (PieceTimes& s : slowest) { // rank 0's own, at the floor
    s.forward = at_floor(s.forward, 0);
    s.backward = at_floor(s.backward, 0);
    s.weight = at_floor(s.weight, 0);
  }
  forward = at_floor(forward, 0);
  backward = at_floor(backward, 0);
  for (int k = fold_; k < ep_; k += fold_) {
    for (std::size_t i = 0; i < slowest.size(); ++i) {
      const PieceTimes& c = st.chunks[k][i];
      slowest[i].forward = std::max(slowest[i].forward, at_floor(c.forward, k));
      slowest[i].backward = std::max(slowest[i].backward, at_floor(c.backward, k));
      slowest[i].weight = std::max(slowest[i].weight, at_floor(c.weight, k));
    }
    forward = std::max(forward, at_floor(st.plan.extra_forward_s[k], k));
    backward = std::max(backward, at_floor(st.plan.extra_backward_s[k], k));
  }
}

void MoeEmitter::account(const Step& st, int layer)
{
  const double imbalance = st.imbalance;
  stats_.routed += st.plan.routed;
  stats_.dropped += st.plan.dropped;
  stats_.imbalance_sum += imbalance;
  stats_.imbalance_max = std::max(stats_.imbalance_max, imbalance);
  ++stats_.steps;
  auto& per_layer = stats_.layer_imbalance[layer];
  per_layer.first += imbalance;
  ++per_layer.second;
  stats_.placement_changes += st.plan.placement_changes;
  stats_.moved_bytes += st.plan.moved_bytes;
  stats_.partitions_sum += st.plan.partitions;
  stats_.activation_scale_min = std::min(stats_.activation_scale_min, st.plan.activation_scale);
}

double MoeEmitter::beside(const Step& st, double t, int group, int device, const PipelineOp& op, bool alongside) const
{
  if ((op.overlap == Overlap::NONE && !alongside) || t <= 0)
    return t;
  const ModelParams& model = plan_.params->model;
  if (st.overlap_comm_s < 0)
    st.overlap_comm_s =
        context(group, device).alltoall_seconds(scaled_sizes(st.traffic, st.plan.wire_scale, false, ep_));
  const double f =
      token_dispatcher(model.moe.dispatcher)
          .sm_share(plan_.params->framework.comm_sm_fraction, model.moe.dispatcher_sms(), plan_.device_sms);
  return beside_communication(t, st.overlap_comm_s, f);
}

std::vector<int> MoeEmitter::collective(const std::tuple<int, int, int, int, int, int, int, int>& key, int group,
                                        int device, const SizeMatrix& dispatch, double factor, bool combine_side,
                                        TaskLabels labels)
{
  // Rank k is simulated when it is its replica's first (k % fold_ == 0) and its replica is built: a prefix of the
  // group (most of a 256-rank group is not, and an MoE step makes this list for every all-to-all).
  const std::vector<int>& hosts = group_hosts(group, device);
  const int n = static_cast<int>(hosts.size());
  const long long built_here =
      std::max(0LL, static_cast<long long>(built_) - static_cast<long long>(group) * replicas_);
  const int simulated_end = static_cast<int>(std::min<long long>(n, built_here * fold_));
  // Every simulated rank of the group asks; the collective is made once. Where one rank stands for the group (a
  // fold), no other asks, and keeping it was a twentieth of a 2,048-GPU search's time.
  const bool shared = simulated_end > fold_;
  if (shared) {
    auto found = collectives_.find(key);
    if (found != collectives_.end())
      return found->second;
  }
  CollectiveSpec spec;
  spec.kind = "all-to-all";
  spec.algorithm = "direct";
  spec.hosts = hosts;
  // The same step's traffic at the same scale is the same matrix: scaled and hashed once (a reused step's traffic
  // repeats for every layer and microbatch).
  auto& matrix = scaled_[std::make_tuple(dispatch.values().data(), factor, combine_side, group, device)];
  if (matrix.sizes.empty()) {
    // Unscaled, it is the step's own matrix, shared rather than copied: as it is on the dispatch side, read
    // transposed on the combine side (under skewed routing every step's matrix differs, and a 2,048-GPU step's
    // copies were two thirds of its memory). A symmetric one is its own transpose, as balanced routing's are.
    matrix.transposed = factor == 1.0 && combine_side && !symmetric_sizes(dispatch, ep_);
    matrix.sizes = factor == 1.0 ? dispatch : sizes_.share(scaled_sizes(dispatch, factor, combine_side, ep_));
    double sum = 0; // in the order of the matrix the collective moves
    for (int i = 0; i < ep_; ++i)
      for (int j = 0; j < ep_; ++j)
        sum += matrix.sizes[matrix.transposed ? std::size_t(j) * ep_ + i : std::size_t(i) * ep_ + j];
    matrix.bytes_per_rank = sum / ep_;
  }
  spec.matrix = matrix.sizes;
  spec.transposed = matrix.transposed;
  spec.bytes = matrix.bytes_per_rank;
  spec.streams = combine_side ? "a2a-combine" : "a2a";
  spec.closed_form = plan_.alltoall_v_closed_form;
  labels.comm = CommKind::EXPERT_ALLTOALL;
  spec.labels = labels;
  // The TP ranks folded into the group are not simulated, nor the replicas left out when one stands for all (their
  // all-to-all is then its closed form, and the groups not built count as copies of this one).
  spec.copies = copies_;
  std::vector<int> streams(n, -1);
  for (int k = 0; k < simulated_end; k += fold_)
    streams[k] = (combine_side ? combine_streams_ : dispatch_streams_).get(spec.hosts[k], 0);
  std::vector<int> members = graph_.add_collective(std::move(spec), streams, {});
  if (shared)
    collectives_[key] = members;
  return members;
}

void MoeEmitter::count_group(int group, int device, const PipelineOp& op, int stage, const Segment& s, TaskLabels lab)
{
  // The same all-to-alls forward_chain makes for a built group, with this group's own step.
  const Step& st = step(lab.iteration, s.layer, op.microbatch, group, device);
  const AllToAllSite at{st, op, stage, s, group, device};
  const int again = sends_again(st, op);
  for (int v = 2; v < 2 + again; ++v)
    alltoall(at, v, 0, lab);
  for (int i = 0; i < st.plan.partitions; ++i) {
    alltoall(at, 0, i, lab);
    alltoall(at, 1, i, lab);
  }
}

int MoeEmitter::sends_again(const Step& st, const PipelineOp& op) const
{
  if (op.forward())
    return 0;
  return plan_.params->model.recomputes("moe") ? 2 : st.plan.recommunicate_share > 0 ? 1 : 0;
}

std::vector<int> MoeEmitter::alltoall(const AllToAllSite& at, int variant, int chunk, TaskLabels labels)
{
  const Step& st = at.step;
  const double again = plan_.params->model.recomputes("moe") ? 1.0 : st.plan.recommunicate_share;
  const double factor = variant == 2   ? st.plan.wire_scale * again
                        : variant == 3 ? st.plan.wire_scale
                                       : st.plan.wire_scale / st.plan.partitions;
  const PipelineOp& op = at.op;
  return collective(
      {op.microbatch, at.stage, at.segment.layer, labels.iteration, op.forward() ? 0 : 1, variant, chunk, at.group},
      at.group, at.device, st.traffic, factor, variant % 2 == 1, labels);
}

int MoeEmitter::forward_chain(const Step& st, int rank, int group, int device, int stream, int pre,
                              const PipelineOp& op, int stage, const Segment& s, TaskLabels lab, double& busy,
                              double shared_s)
{
  const int n = st.plan.partitions;
  const bool forward = op.forward();
  const AllToAllSite at{st, op, stage, s, group, device};
  const std::string model = st.chunks[rank][0].model.empty() ? "given" : st.chunks[rank][0].model;
  std::vector<int> ends;
  // The dispatch resent to rebuild the buffer not kept (MPipeMoE), or the whole layer's forward again before its
  // backward (Megatron-Core's `moe` recompute module): dispatch and combine once more.
  int recommunicated = pre;
  for (int v = 2; v < 2 + sends_again(st, op); ++v) {
    TaskLabels l = lab;
    l.phase = graph_.intern(v == 2 ? "dispatch_again" : "combine_again");
    const auto& m = alltoall(at, v, 0, l);
    graph_.add_dependency(recommunicated, m[rank]);
    recommunicated = m[rank];
  }
  if (recommunicated == pre)
    recommunicated = -1;
  if (shared_s > 0) { // on the compute stream after `pre`, so beside the all-to-all that `pre` starts
    const double seconds = beside(st, shared_s, group, device, op, true);
    graph_.add_compute(stream, seconds, forward ? "shared_experts_forward" : "shared_experts_backward", model, lab);
    busy += seconds;
  }
  for (int i = 0; i < n; ++i) {
    TaskLabels l = lab;
    l.phase = graph_.intern(forward ? "dispatch" : "combine_grad");
    const auto& in = alltoall(at, 0, i, l);
    graph_.add_dependency(pre, in[rank]);
    const PieceTimes& c = st.chunks[rank][i];
    // Megatron-Core's --delay-wgrad-compute: a whole backward's expert weight gradients wait until the dispatch's
    // gradient is sent, and run beside it.
    const bool delay = !forward && op.pass == Pass::BACKWARD && plan_.params->framework.delay_wgrad_compute;
    const double seconds = beside(st,
                                  forward                               ? c.forward
                                  : op.pass == Pass::BACKWARD && !delay ? c.backward
                                                                        : c.backward - c.weight,
                                  group, device, op);
    const int work = graph_.add_compute(stream, seconds, forward ? "experts_forward" : "experts_backward", model, lab);
    busy += seconds;
    graph_.add_dependency(in[rank], work);
    if (recommunicated >= 0)
      graph_.add_dependency(recommunicated, work);
    l.phase = graph_.intern(forward ? "combine" : "dispatch_grad");
    const auto& out = alltoall(at, 1, i, l);
    graph_.add_dependency(work, out[rank]);
    ends.push_back(out[rank]);
    if (delay) { // next on the compute stream, while the dispatch's gradient is on the wire
      const double weight = beside(st, c.weight, group, device, op);
      graph_.add_compute(stream, weight, "experts_backward_weight", model, lab);
      busy += weight;
    }
  }
  const int join = graph_.add_delay(stream, 0.0, forward ? "moe_combined" : "moe_gradients_back", lab);
  for (int e : ends)
    graph_.add_dependency(e, join);
  return join;
}

std::pair<int, int> MoeEmitter::emit(const SegmentSite& site, const Segment& s, TaskLabels lab, double& busy)
{
  const int replica = site.replica, device = site.device, stream = site.stream, stage = site.stage;
  const PipelineOp& op = *site.op;
  const int group = replica / replicas_, rank = (replica % replicas_) * fold_;
  if (counts_groups_ && replica == 0 && op.pass != Pass::BACKWARD_WEIGHT)
    for (int g = 1; g < groups_; ++g)
      count_group(g, device, op, stage, s, lab);
  const Step& st = step(lab.iteration, s.layer, op.microbatch, group, device);
  const std::string model = st.chunks[rank][0].model.empty() ? "given" : st.chunks[rank][0].model;
  if (op.pass == Pass::BACKWARD_WEIGHT) { // no communication: the dense and expert weight gradients
    double seconds = s.weight_s + s.beside_reduce_s;
    for (const auto& c : st.chunks[rank])
      seconds += c.weight;
    busy += seconds;
    const int t = graph_.add_compute(stream, seconds, "moe_layer_backward_weight", model, lab);
    return {t, t};
  }
  if (op.forward()) {
    const double seconds =
        beside(st, s.forward_s - s.shared_forward_s + st.plan.extra_forward_s[rank], group, device, op);
    const int pre = graph_.add_compute(stream, seconds, "moe_dense_forward", model, lab);
    busy += seconds;
    int lead = pre;
    if (st.shadow_s[rank] > 0) { // the shadowed experts' weights broadcast to every worker
      TaskLabels l = lab;
      l.comm = CommKind::EXPERT_ALLTOALL;
      l.phase = graph_.intern("expert_placement");
      lead = graph_.add_delay(stream, st.shadow_s[rank], "shadow-broadcast/closed-form", l);
      graph_.add_dependency(pre, lead);
    }
    for (const auto& move : st.plan.moves) // expert state this rank sends to its new holder, beside training
      if (move.from == rank) {
        TaskLabels l = lab;
        l.comm = CommKind::EXPERT_MIGRATION;
        l.phase = graph_.intern("expert_placement");
        const auto hosts = group_hosts(group, device);
        const int t = graph_.add_transfer(dispatch_streams_.get(hosts[rank], 700), hosts[rank], hosts[move.to],
                                          move.bytes, "expert-migration", l);
        graph_.add_dependency(pre, t);
      }
    return {pre, forward_chain(st, rank, group, device, stream, lead, op, stage, s, lab, busy, s.shared_forward_s)};
  }
  const int in = graph_.add_delay(stream, 0.0, "moe_gradients_in", lab);
  // The shared experts' backward beside the combine's gradient, in a whole backward (a split one keeps it in place).
  const double shared = op.pass == Pass::BACKWARD ? s.shared_backward_s : 0.0;
  const int back = forward_chain(st, rank, group, device, stream, in, op, stage, s, lab, busy, shared);
  const double seconds =
      beside(st,
             (op.pass == Pass::BACKWARD ? s.backward_s + s.beside_reduce_s - shared : s.backward_s - s.weight_s) +
                 st.plan.extra_backward_s[rank],
             group, device, op);
  const int post = graph_.add_compute(stream, seconds, "moe_dense_backward", model, lab);
  busy += seconds;
  graph_.add_dependency(back, post);
  int last = post;
  if (st.shadow_s[rank] > 0) { // the shadowed experts' gradients reduced back to their owners
    TaskLabels l = lab;
    l.comm = CommKind::EXPERT_ALLTOALL;
    l.phase = graph_.intern("expert_placement");
    last = graph_.add_delay(stream, st.shadow_s[rank], "shadow-reduce/closed-form", l);
    graph_.add_dependency(post, last);
  }
  return {in, last};
}

} // namespace cs

namespace cs {

void MoeEmitter::finish(TrainingGraph& out) const
{
  out.moe = stats_;
  out.moe.extra_expert_slots = plan_.moe->extra_expert_slots();
  // EP group 0 stood for every group: the cluster's totals are its own times the groups (ratios and maxima stay).
  out.moe.routed *= copies_;
  out.moe.dropped *= copies_;
  out.moe.placement_changes *= static_cast<int>(copies_);
  out.moe.moved_bytes *= copies_;
}

/** The MoE layers of an MoE model's plan. */
class MoeExtension : public TrainingExtensionKind {
public:
  std::unique_ptr<TrainingExtension> make(const TrainingPlan& plan, TaskGraph& graph) const override
  {
    if (!plan.params->model.moe.enabled())
      return nullptr;
    if (!plan.routing || !plan.moe)
      throw std::invalid_argument("an MoE model needs a routing model and an MoE policy");
    return std::make_unique<MoeEmitter>(plan, graph);
  }
};

CS_REGISTER_TRAINING_EXTENSION(
    MoeExtension, "moe", "MoE layers: dispatch and combine all-to-alls and the experts, as the policy plans them");

} // namespace cs
