#include "workloads/training/training_comm.hpp"

#include "models/transformer/fp8_recipe.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace cs {

CommEmitter::CommEmitter(TrainingGraph& out, const TrainingPlan& plan, StreamPool& streams,
                         const std::vector<std::vector<PipelineOp>>& order)
    : out_(out), plan_(plan), streams_(streams), order_(order)
{
  // Gradients are averaged, and ZeRO shards, over the data-parallel replicas and, inside each, the context-parallel
  // ranks (Megatron-Core's data-parallel group with context parallelism: dp x cp), and under DualPipe over both copies
  // of the model.
  const StageMap& map = plan.stages->map;
  const int pp = plan.parallel.pp, dp = plan.parallel.dp * plan.parallel.cp * map.chains();
  cp_ = plan.parallel.cp;
  group_ = dp;
  built_ = plan.replicas_to_build();
  sharded_ = plan.params->parallel.zero >= 1 && dp > 1;
  zero3_ = plan.params->parallel.zero >= 3 && dp > 1;
  const FrameworkProfile& fw = plan.params->framework;
  keeps_unsharded_ = fw.keeps_stages_gathered(plan.parallel);
  gather_ = gather_element_bytes(plan.params->model, fw);
  reduce_bytes_ = dtype_bytes(fw.reduce_dtype_for(plan.params->model.dtype));
  // The ops whose gradients are reduced: each stage's last gradient-completing op, or every one of them when every
  // microbatch reduces (FSDP without no_sync; not under a pipeline that keeps the stage unsharded).
  reduce_ops_.assign(plan.stages->stages.size(), {});
  pieces_.resize(pp);
  for (int d = 0; d < pp; ++d) {
    pieces_[d].assign(order[d].size(), zero3_ ? 1 : 0);
    for (std::size_t i = 0; i < order[d].size(); ++i)
      if (order[d][i].completes()) {
        auto& ops = reduce_ops_[map.stage(d, order[d][i].chunk)];
        if (!fw.reduce_every_microbatch || keeps_unsharded_)
          ops.clear();
        ops.push_back(i);
      }
  }
  if (plan.overlap == GradientOverlap::DURING_BACKWARD && dp > 1)
    for (std::size_t vs = 0; vs < static_cast<std::size_t>(map.chain_length()); ++vs) // a twin reduces whole
      for (std::size_t op : reduce_ops_[vs])
        pieces_[map.device_of(static_cast<int>(vs))][op] = 1;
}

bool CommEmitter::in_pieces(int device, std::size_t op) const { return pieces_[device][op] != 0; }

int CommEmitter::twin_device(int stage) const
{
  const StageMap& map = plan_.stages->map;
  return map.chains() > 1 ? map.device_of(map.twin(stage)) : -1;
}

std::size_t CommEmitter::twin_op(int stage, std::size_t op) const
{
  const auto& own = reduce_ops_[stage];
  const std::size_t k = static_cast<std::size_t>(std::find(own.begin(), own.end(), op) - own.begin());
  return reduce_ops_[plan_.stages->map.twin(stage)].at(k);
}

std::size_t CommEmitter::join(SyncRequest& req, const SyncRequest& twin)
{
  const std::size_t own = req.hosts.size();
  req.hosts.insert(req.hosts.end(), twin.hosts.begin(), twin.hosts.end());
  req.streams.insert(req.streams.end(), twin.streams.begin(), twin.streams.end());
  req.ready.insert(req.ready.end(), twin.ready.begin(), twin.ready.end());
  return own;
}

int CommEmitter::task_of(const PipelineTasks& p, int device, std::size_t op, int piece) const
{
  const OpTasks& t = p.ops[device][op];
  return piece < 0 ? t.last : t.pieces.at(piece);
}

SyncRequest CommEmitter::group_request(int device, double bytes, const std::vector<int>& ready, TaskLabels labels,
                                       const std::vector<int>& replicas, int first, int count)
{
  SyncRequest req;
  if (replicas.empty()) { // the dense group: every replica's CP ranks; CP rank 0 of a built replica is simulated
    for (int r = first; r < (count > 0 ? first + count : plan_.parallel.dp); ++r)
      for (int c = 0; c < cp_; ++c) {
        const int host = plan_.parallel.host(RankCoords{r, device, c, 0});
        const bool simulated = c == 0 && r < built_;
        req.hosts.push_back(host);
        req.streams.push_back(simulated ? streams_.get(host, 0) : -1);
        req.ready.push_back(simulated ? ready[r] : -1);
      }
  }
  for (int r : replicas) {
    const int host = plan_.parallel.host(r, device);
    req.hosts.push_back(host);
    req.streams.push_back(r < built_ ? streams_.get(host, 0) : -1);
    req.ready.push_back(r < built_ ? ready[r] : -1);
  }
  req.bytes = bytes;
  req.labels = labels;
  return req;
}

SyncRequest CommEmitter::expert_request(int device, double bytes, const std::vector<int>& ready, TaskLabels labels,
                                        const std::vector<int>& group)
{
  if (plan_.parallel.ep == 1)
    return group_request(device, bytes, ready, labels);
  SyncRequest req = group_request(device, bytes, ready, labels, group);
  req.copies = cp_;
  return req;
}

// Buckets close as gradients complete: during the last backward pass of a stage, piece by piece, when the filled
// bytes reach the bucket size (and the rest at the pass's end); otherwise after it, in equal buckets.
std::vector<CommEmitter::Bucket> CommEmitter::plan_buckets(const PipelineTasks& replica0) const
{
  const auto& costs = plan_.stages->stages;
  const double limit = plan_.params->gradient_bucket.value;
  std::vector<Bucket> out;
  for (std::size_t vs = 0; vs < static_cast<std::size_t>(plan_.stages->map.chain_length()); ++vs) { // twins join
    const int d = plan_.stages->map.device_of(static_cast<int>(vs));
    for (std::size_t op : reduce_ops_[vs]) {
      if (!pieces_[d][op] || costs[vs].segments.empty()) {
        const double bytes = (costs[vs].params - costs[vs].expert_params) * reduce_bytes_;
        const int count = std::max(1, static_cast<int>(std::ceil(bytes / limit)));
        for (int b = 0; b < count; ++b)
          out.push_back({static_cast<int>(vs), op, -1, bytes / count});
        continue;
      }
      const OpTasks& t = replica0.ops[d][op];
      const auto segments = segment_order(costs[vs], order_[d][op].pass);
      double filled = 0;
      for (std::size_t k = 0; k < t.pieces.size(); ++k)
        for (int i = t.piece_segments[k].first; i < t.piece_segments[k].second; ++i) {
          filled +=
              (costs[vs].segments[segments[i]].params - costs[vs].segments[segments[i]].expert_params) * reduce_bytes_;
          if (filled >= limit) {
            out.push_back({static_cast<int>(vs), op, static_cast<int>(k), filled});
            filled = 0;
          }
        }
      if (filled > 0)
        out.push_back({static_cast<int>(vs), op, static_cast<int>(t.pieces.size()) - 1, filled});
    }
  }
  return out;
}

void CommEmitter::reduce_bucket(int it, std::size_t b, const Bucket& k, const std::vector<PipelineTasks>& replicas,
                                std::vector<std::vector<int>>& done)
{
  const int pp = plan_.parallel.pp, d = plan_.stages->map.device_of(k.stage);
  std::vector<int> ready;
  for (int r = 0; r < built_; ++r)
    ready.push_back(task_of(replicas[r], d, k.op, k.piece));
  const TaskLabels labels{
      it, k.stage, -1, -1, out_.graph.intern("gradient-sync"), CommKind::GRADIENT_SYNC, static_cast<int>(b)};
  if (replicated()) { // no twins: HSDP runs one copy of the model
    reduce_replicated(d, k.bytes, ready, labels, done);
    return;
  }
  SyncRequest req = group_request(d, k.bytes, ready, labels);
  // DualPipe: the other copy's stage at the same place holds the same parameters; its gradients join the reduction,
  // from its own device, once its matching pass completes.
  const int twin = twin_device(k.stage);
  std::size_t own = 0;
  if (twin >= 0) {
    const std::size_t op = twin_op(k.stage, k.op);
    std::vector<int> twin_ready;
    for (int r = 0; r < built_; ++r)
      twin_ready.push_back(task_of(replicas[r], twin, op, -1));
    own = join(req, group_request(twin, k.bytes, twin_ready, labels));
  }
  const auto members = plan_.sync->reduce(out_.graph, req, sharded_);
  for (int r = 0; r < built_; ++r) {
    done[r * pp + d].push_back(members[r * cp_]);
    if (twin >= 0)
      done[r * pp + twin].push_back(members[own + r * cp_]);
  }
}

// Without ZeRO-3 the buckets go out in the order they close. Under ZeRO-3 each device's gathers and reductions share
// its one communication stream (one NCCL communicator per group) and go out in the order of what triggers them, as
// FSDP issues them: a gather when the piece two before its own ends (prefetch), a reduction when its piece ends,
// the reduction first where both wait on the same piece.
std::vector<std::vector<int>> CommEmitter::communicate(int it, const std::vector<Bucket>& buckets,
                                                       const std::vector<PipelineTasks>& replicas,
                                                       const std::vector<int>& ends)
{
  const int pp = plan_.parallel.pp;
  std::vector<std::vector<int>> done(built_ * pp);
  if (!zero3_) {
    for (std::size_t b = 0; b < buckets.size(); ++b)
      reduce_bucket(it, b, buckets[b], replicas, done);
    reduce_expert_gradients(it, done, replicas);
    return done;
  }
  constexpr int kWholeOp = 1 << 30; // a bucket waiting for its op's last task: after every piece of the op
  for (int d = 0; d < pp; ++d) {
    const auto slots = plan_slots(d, replicas[0]);
    // (trigger op, trigger piece, 0 = reduction / 1 = gather, index): sorted, the emission order.
    std::vector<std::tuple<long long, int, int, std::size_t>> events;
    for (std::size_t s = 0; s < slots.size(); ++s)
      events.emplace_back(s < 2 ? -1 : static_cast<long long>(slots[s - 2].op), s < 2 ? -1 : slots[s - 2].piece, 1, s);
    for (std::size_t b = 0; b < buckets.size(); ++b)
      if (plan_.stages->map.device_of(buckets[b].stage) == d)
        events.emplace_back(static_cast<long long>(buckets[b].op), buckets[b].piece < 0 ? kWholeOp : buckets[b].piece,
                            0, b);
    std::sort(events.begin(), events.end());
    for (const auto& [op, piece, gather, index] : events) {
      if (gather)
        gather_slot(it, d, slots, index, replicas, ends);
      else
        reduce_bucket(it, index, buckets[index], replicas, done);
    }
  }
  reduce_expert_gradients(it, done, replicas);
  return done;
}

// MoE: each stage's routed-expert gradients are all-reduced (ZeRO-3: reduce-scattered) over the expert-data-parallel
// group (the replicas with the same expert-parallel rank: r, r + ep, ...), after the stage's last gradient-completing
// pass, in buckets.
void CommEmitter::reduce_expert_gradients(int it, std::vector<std::vector<int>>& done,
                                          const std::vector<PipelineTasks>& replicas)
{
  // ep: the replicas of one EP group (ep / tp of them under MoE parallel folding, whose other TP ranks mirror them).
  const int pp = plan_.parallel.pp, ep = plan_.parallel.ep_replicas(), dp = plan_.parallel.dp;
  const auto& costs = plan_.stages->stages;
  if (dp / ep * int(expert_stride()) * plan_.stages->map.chains() < 2)
    return;
  for (std::size_t vs = 0; vs < static_cast<std::size_t>(plan_.stages->map.chain_length()); ++vs) { // twins join
    const double bytes = costs[vs].expert_params * reduce_bytes_;
    if (bytes <= 0 || reduce_ops_[vs].empty())
      continue;
    const int d = plan_.stages->map.device_of(static_cast<int>(vs));
    const std::size_t op = reduce_ops_[vs].back();
    const int count = std::max(1, static_cast<int>(std::ceil(bytes / plan_.params->gradient_bucket.value)));
    for (int b = 0; b < count; ++b)
      for (int k = 0; k < ep; ++k) {
        const std::vector<int> group = plan_.parallel.expert_dp_replicas(k);
        std::vector<int> ready(built_, -1);
        for (int r : group)
          if (r < built_)
            ready[r] = task_of(replicas[r], d, op, -1);
        const TaskLabels labels{
            it, static_cast<int>(vs), -1, -1, out_.graph.intern("expert-gradient-sync"), CommKind::GRADIENT_SYNC, -1};
        const std::size_t stride = expert_stride();
        SyncRequest req = expert_request(d, bytes / count, ready, labels, group);
        const int twin = twin_device(static_cast<int>(vs));
        std::size_t own = 0;
        if (twin >= 0) {
          std::vector<int> twin_ready(built_, -1);
          for (int r : group)
            if (r < built_)
              twin_ready[r] = task_of(replicas[r], twin, reduce_ops_[plan_.stages->map.twin(int(vs))].back(), -1);
          own = join(req, expert_request(twin, bytes / count, twin_ready, labels, group));
        }
        // ZeRO-3 keeps each expert-data-parallel rank's shard only: a reduce-scatter; otherwise an all-reduce.
        const auto members = plan_.sync->reduce(out_.graph, req, zero3_);
        for (std::size_t i = 0; i < group.size(); ++i)
          if (group[i] < built_) {
            done[group[i] * pp + d].push_back(members[i * stride]);
            if (twin >= 0)
              done[group[i] * pp + twin].push_back(members[own + i * stride]);
          }
      }
  }
}

std::vector<int> CommEmitter::iteration(int it, const std::vector<PipelineTasks>& replicas,
                                        const std::vector<int>& ends)
{
  const int pp = plan_.parallel.pp;
  const std::vector<Bucket> buckets = group_ > 1 ? plan_buckets(replicas[0]) : std::vector<Bucket>{};
  out_.buckets = static_cast<int>(buckets.size());
  const auto reduced = communicate(it, buckets, replicas, ends);
  // The optimizer step of each device over its chunks' parameters (ZeRO: its 1/dp shard; of routed experts, its
  // 1/(dp/ep) shard over the expert-data-parallel group).
  std::vector<int> next(built_ * pp);
  out_.optimizer_tasks.emplace_back();
  for (int h = 0; h < built_ * pp; ++h) {
    const double params = optimizer_parameters(*plan_.stages, h % pp, plan_.parallel, sharded_);
    const FrameworkProfile& fw = plan_.params->framework;
    const PassCost adam = pass_cost(*plan_.cost, {optimizer_kernel(params, fw, plan_.params->model)}, fw.kernel_gap_s);
    const int opt = out_.graph.add_compute(out_.compute_streams[h], adam.seconds, "adam", adam.model,
                                           TaskLabels{it, h % pp, -1, -1, out_.graph.intern("optimizer")});
    for (int t : reduced[h])
      out_.graph.add_dependency(t, opt);
    out_.optimizer_tasks.back().push_back(opt);
    next[h] = opt;
    // Under an FP8 recipe the updated weights are cast to their FP8 copies once for the next step (Transformer Engine
    // does it in the first microbatch's forward and caches them) [recon: placed after the optimizer step; under
    // ZeRO-3 each rank casts its shard before the gathers, as FP8 all-gathers do].
    if (const auto& fp8 = plan_.params->model.fp8) {
      const double shards = double(plan_.parallel.shard_dp()) * plan_.parallel.cp * plan_.stages->map.chains();
      // Kept as FP8 parameters (fp8_param_gather), each rank casts its own shard and the gather carries the casts.
      const bool own_shard = zero3_ || (sharded_ && fw.fp8_param_gather);
      const double weights = fp8_weights(*plan_.stages, h % pp) / (own_shard ? shards : 1.0);
      const PassCost cast = pass_cost(*plan_.cost, fp8->weight_casts(weights, 2.0), fw.kernel_gap_s);
      if (cast.seconds > 0) {
        const int c = out_.graph.add_compute(out_.compute_streams[h], cast.seconds, "fp8_weight_cast", cast.model,
                                             TaskLabels{it, h % pp, -1, -1, out_.graph.intern("optimizer")});
        out_.graph.add_dependency(opt, c);
        next[h] = c;
      }
    }
  }
  if (!sharded_ || zero3_)
    return next;
  // ZeRO-1/2: each bucket's updated shards are all-gathered; a device's next iteration starts once its stages'
  // buckets are back (a zero-length join on its compute stream).
  std::vector<std::vector<int>> gathered(built_ * pp);
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    if (buckets[b].op != reduce_ops_[buckets[b].stage].back())
      continue; // an earlier microbatch's reduction: the step gathers each shard once
    const int d = plan_.stages->map.device_of(buckets[b].stage), twin = twin_device(buckets[b].stage);
    const double bytes = buckets[b].bytes / reduce_bytes_ * gathered_bytes_per_parameter(buckets[b].stage);
    const TaskLabels labels{it,
                            buckets[b].stage,
                            -1,
                            -1,
                            out_.graph.intern("parameter-gather"),
                            CommKind::PARAMETER_GATHER,
                            static_cast<int>(b)};
    auto ready = [&](int device) {
      std::vector<int> out;
      for (int r = 0; r < built_; ++r)
        out.push_back(next[r * pp + device]);
      return out;
    };
    SyncRequest req = group_request(d, bytes, ready(d), labels);
    const std::size_t own = twin >= 0 ? join(req, group_request(twin, bytes, ready(twin), labels)) : 0;
    const auto members = replicated() ? gather_dense(d, bytes, ready(d), labels) : plan_.sync->gather(out_.graph, req);
    for (int r = 0; r < built_; ++r) {
      gathered[r * pp + d].push_back(members[r * cp_]);
      if (twin >= 0)
        gathered[r * pp + twin].push_back(members[own + r * cp_]);
    }
  }
  for (int h = 0; h < built_ * pp; ++h) {
    const int join = out_.graph.add_delay(out_.compute_streams[h], 0, "gather-join",
                                          TaskLabels{it, h % pp, -1, -1, out_.graph.intern("parameter-gather")});
    for (int t : gathered[h])
      out_.graph.add_dependency(t, join);
    next[h] = join;
  }
  return next;
}

// Bytes a dense parameter of virtual stage `vs` moves in ZeRO-1/2's gather after the step: its FP8 GEMM weights at
// one FP8 byte under fp8_param_gather, the rest in the model's dtype [recon: the stage's mean stands for each of its
// buckets'].
double CommEmitter::gathered_bytes_per_parameter(int vs) const
{
  const StageCost& c = plan_.stages->stages[static_cast<std::size_t>(vs)];
  const double dense = c.params - c.expert_params;
  return dense > 0 ? dense_gather_bytes(c, gather_) / dense : gather_.element;
}

// ZeRO-3: every piece that computes with parameters gathers them first (the head keeps its own from forward to
// backward; weight-gradient passes need none). FSDP-style prefetch: a piece's gather is issued when the piece
// before it starts, i.e. once the one before that has ended (the first two after the previous iteration's step).
// A pipeline that keeps its stages unsharded gathers each chunk once, before its first forward of the step.
std::vector<CommEmitter::Slot> CommEmitter::plan_slots(int d, const PipelineTasks& replica0) const
{
  const auto& costs = plan_.stages->stages;
  std::vector<Slot> out;
  std::vector<bool> gathered(static_cast<std::size_t>(plan_.stages->map.chunks()), false);
  for (std::size_t i = 0; i < order_[d].size(); ++i) {
    const PipelineOp& op = order_[d][i];
    if (op.pass == Pass::BACKWARD_WEIGHT)
      continue;
    if (keeps_unsharded_) {
      if (gathered.at(static_cast<std::size_t>(op.chunk)))
        continue;
      gathered[static_cast<std::size_t>(op.chunk)] = true;
    }
    const StageCost& c = costs[plan_.stages->map.stage(d, op.chunk)];
    const auto segments = segment_order(c, op.pass);
    const OpTasks& t = replica0.ops[d][i];
    for (std::size_t k = 0; k < t.pieces.size(); ++k) {
      double bytes = 0, expert_bytes = 0;
      for (int s = t.piece_segments[k].first; s < t.piece_segments[k].second; ++s) {
        const Segment& seg = c.segments[segments[s]];
        if (op.forward() || !seg.keeps_gathered) {
          bytes += dense_gather_bytes(seg, gather_);
          expert_bytes += seg.expert_params * gather_.fp8; // routed experts are GEMM weights whole
        }
      }
      if (bytes > 0 || expert_bytes > 0)
        out.push_back({i, static_cast<int>(k), bytes, expert_bytes});
    }
  }
  return out;
}

void CommEmitter::gather_slot(int it, int d, const std::vector<Slot>& slots, std::size_t s,
                              const std::vector<PipelineTasks>& replicas, const std::vector<int>& ends)
{
  const int pp = plan_.parallel.pp, ep = plan_.parallel.ep_replicas();
  std::vector<int> ready;
  for (int r = 0; r < built_; ++r)
    ready.push_back(s < 2 ? ends[r * pp + d] : task_of(replicas[r], d, slots[s - 2].op, slots[s - 2].piece));
  const PipelineOp& op = order_[d][slots[s].op];
  const Task& first = out_.graph.task(task_of(replicas[0], d, slots[s].op, slots[s].piece));
  TaskLabels lab{it,
                 plan_.stages->map.stage(d, op.chunk),
                 op.microbatch,
                 first.labels.layer,
                 out_.graph.intern("parameter-gather"),
                 CommKind::PARAMETER_GATHER};
  auto before_piece = [&](int r, int member) {
    out_.graph.add_dependency(member, replicas[r].ops[d][slots[s].op].piece_first.at(slots[s].piece));
  };
  if (slots[s].bytes > 0) {
    const auto members = gather_dense(d, slots[s].bytes, ready, lab);
    for (int r = 0; r < built_; ++r)
      before_piece(r, members[r * cp_]);
  }
  // Routed experts are sharded over their expert-data-parallel group (replicas k, k + ep, ...), not over dp.
  for (int k = 0; slots[s].expert_bytes > 0 && k < ep; ++k) {
    const std::vector<int> group = plan_.parallel.expert_dp_replicas(k);
    if (group.size() * expert_stride() < 2)
      break;
    const auto members = plan_.sync->gather(out_.graph, expert_request(d, slots[s].expert_bytes, ready, lab, group));
    for (std::size_t i = 0; i < group.size(); ++i)
      if (group[i] < built_)
        before_piece(group[i], members[i * expert_stride()]);
  }
}

} // namespace cs
