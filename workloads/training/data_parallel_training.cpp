#include "workloads/training/data_parallel_training.hpp"

#include "models/collectives/collective_model.hpp"
#include "models/transformer/pass_cost.hpp"

#include <map>
#include <stdexcept>

namespace cs {

TrainingGraph build_data_parallel_training(const TrainingParams& w, const KernelCostModel& cost, int ranks,
                                           const GradientSync& sync, const PlatformSpec& platform, bool one_replica)
{
  const ModelParams& m = w.model;
  if (w.batch.global % (ranks * w.batch.micro) != 0)
    throw std::invalid_argument("global batch does not divide into data-parallel ranks x micro batch");
  TrainingGraph out;
  out.ranks = ranks;
  out.microbatches = w.batch.global / (ranks * w.batch.micro);
  out.parameters = total_parameters(m);
  out.gradient_bytes = out.parameters * dtype_bytes(m.dtype);
  out.model_flops_per_iteration = megatron_model_flops(m, w.batch.global);
  out.samples_per_iteration = w.batch.global;
  out.tokens_per_iteration = double(w.batch.global) * m.seq;

  const int tp = w.parallel.tp;
  // ZeRO-1/2/3: gradients are reduce-scattered and each rank steps its shard. ZeRO-1/2 then all-gather the updated
  // parameters once; ZeRO-3 keeps them sharded and gathers each layer before its forward and its backward.
  const bool sharded = w.parallel.zero >= 1 && ranks > 1;
  const bool gather_per_layer = w.parallel.zero >= 3 && ranks > 1;
  const auto layer_kernels = layer_forward_kernels(m, w.batch.micro);
  const bool sp = w.parallel.sequence_parallel && tp > 1;
  const auto [attn_kernels, mlp_kernels] = layer_forward_blocks(m, w.batch.micro, tp, sp);
  const PassCost attn_fwd = pass_cost(cost, attn_kernels), mlp_fwd = pass_cost(cost, mlp_kernels);
  PassCost attn_bwd = pass_cost(cost, backward_kernels(attn_kernels)),
           mlp_bwd = pass_cost(cost, backward_kernels(mlp_kernels));
  if (m.recompute == "full") {
    attn_bwd.seconds += attn_fwd.seconds;
    mlp_bwd.seconds += mlp_fwd.seconds;
  }
  // Megatron's two all-reduces per block pass: the block output's activations over the TP group.
  const double tp_bytes = double(w.batch.micro) * m.seq * m.hidden * dtype_bytes(m.dtype);
  const auto head_kernels = head_forward_kernels(m, w.batch.micro);
  const PassCost layer_fwd = pass_cost(cost, layer_kernels);
  PassCost layer_bwd = pass_cost(cost, backward_kernels(layer_kernels));
  if (m.recompute == "full") // the forward pass runs again inside backward
    layer_bwd.seconds += layer_fwd.seconds;
  const PassCost head_fwd = pass_cost(cost, head_kernels);
  const PassCost head_bwd = pass_cost(cost, backward_kernels(head_kernels));
  const double layer_grad_bytes = layer_parameters(m) * dtype_bytes(m.dtype);
  const double embedding_grad_bytes = (embedding_parameters(m) + head_parameters(m)) * dtype_bytes(m.dtype);

  TaskGraph& g = out.graph;
  // Replica r's tensor-parallel rank k runs on host r * tp + k: a TP group shares a node.
  const int dp = ranks, hosts_total = dp * tp;
  const int built = one_replica ? 1 : dp; // replicas whose tasks are in the graph
  // The data-parallel group of TP rank k: the same rank of every replica.
  auto dp_group = [&](int k) {
    std::vector<int> hosts;
    for (int r = 0; r < dp; ++r)
      hosts.push_back(r * tp + k);
    return hosts;
  };
  out.ranks = hosts_total;
  out.tensor_parallel = tp;
  for (int h = 0; h < hosts_total; ++h)
    out.compute_streams.push_back(g.add_stream(h, "compute"));
  StreamPool comm_streams(g);
  StreamPool tp_streams(g, "tp"); // TP and DP traffic on their own streams, as NCCL uses separate communicators
  const GroupShape tp_shape = tp > 1 ? group_shape(platform,
                                                   [&] {
                                                     std::vector<int> hosts(tp);
                                                     for (int k = 0; k < tp; ++k)
                                                       hosts[k] = k;
                                                     return hosts;
                                                   }())
                                     : GroupShape{};
  // Without sequence parallelism a block pass ends in an all-reduce; with it, in a reduce-scatter followed by the
  // next block's all-gather (Megatron-SP), the same bytes on the wire.
  const std::vector<std::string> tp_ops =
      sp ? std::vector<std::string>{"reduce-scatter", "all-gather"} : std::vector<std::string>{"all-reduce"};
  std::vector<CollectiveChoice> tp_choices;
  if (tp > 1)
    for (const auto& op : tp_ops)
      tp_choices.push_back(choose_collective(op, "auto", tp_bytes, tp_shape));
  // One TP all-reduce after `after[k]` on each rank of replica r; returns each rank's completion.
  std::map<int, int> join_stream; // per host: zero-length joins between a reduce-scatter and its all-gather
  auto tp_all_reduce = [&](int r, const std::vector<int>& after, TaskLabels lab) {
    std::vector<int> ready = after;
    std::vector<std::vector<int>> done;
    if (one_replica) { // the TP ranks are symmetric too: each waits its collectives' closed-form time
      double seconds = 0;
      for (const auto& c : tp_choices)
        seconds += c.seconds;
      done.resize(tp);
      for (int k = 0; k < tp; ++k) {
        done[k] = {g.add_delay(tp_streams.get(r * tp + k, 0), seconds, "tp/closed-form", lab)};
        g.add_dependency(after[k], done[k][0]);
      }
      return done;
    }
    for (std::size_t i = 0; i < tp_ops.size(); ++i) {
      if (i > 0) // the all-gather starts on each rank once its reduce-scatter share is complete
        for (int k = 0; k < tp; ++k) {
          const int h = r * tp + k;
          auto [it, fresh] = join_stream.try_emplace(h, -1);
          if (fresh)
            it->second = g.add_stream(h, "tp-join");
          ready[k] = g.add_delay(it->second, 0, "sp-join", lab);
          for (int d : done[k])
            g.add_dependency(d, ready[k]);
        }
      CollectiveRequest req;
      req.kind = tp_ops[i];
      for (int k = 0; k < tp; ++k)
        req.hosts.push_back(r * tp + k);
      req.bytes = tp_bytes;
      req.ready = ready;
      req.labels = lab;
      done = expand_collective(g, tp_streams, platform, req, tp_choices[i]);
    }
    return done;
  };
  // Per host: completions (TP all-reduces) that the next block on its compute stream must wait for; carried
  // across iterations, so the next iteration's first block waits for this one's last all-reduce.
  std::vector<std::vector<int>> pending(hosts_total);
  std::vector<int> previous_optimizer(hosts_total, -1);
  // ZeRO-3: a layer's parameters are gathered (per TP rank, over the data-parallel group) before each pass over
  // it. FSDP-style prefetch: the gather for a pass is issued when the previous pass starts computing, i.e. once
  // the pass before that has ended.
  struct GatherSlot {
    double bytes = 0;
    TaskLabels labels;
    std::vector<int> first; // per TP rank: the pass's first compute task, which waits for the gather
    std::vector<int> last;  // per TP rank: its last compute task
  };
  const double layer_gather_bytes = layer_parameters(m) / tp * dtype_bytes(m.dtype);
  const double head_gather_bytes = (embedding_parameters(m) + head_parameters(m)) / tp * dtype_bytes(m.dtype);
  for (int it = 0; it < w.iterations; ++it) {
    std::vector<std::vector<GatherSlot>> slots(dp); // [replica][pass]
    // Buckets close at the same layer on every rank; collect per bucket the producing task of each host.
    std::vector<std::vector<int>> bucket_ready; // [bucket][host]
    std::vector<double> bucket_bytes;           // per TP rank
    for (int r = 0; r < built; ++r) {
      double filled = 0;
      int bucket = 0;
      std::vector<int> last(tp, -1); // per TP rank, the latest task on its compute stream
      auto close_bucket = [&]() {
        if (r == 0) {
          bucket_ready.emplace_back(hosts_total, -1);
          bucket_bytes.push_back(filled / tp);
        }
        for (int k = 0; k < tp; ++k)
          bucket_ready[bucket][r * tp + k] = last[k];
        ++bucket;
        filled = 0;
      };
      bool opens_pass = false; // the next block starts a pass that a ZeRO-3 gather feeds
      auto gather = [&](double bytes, TaskLabels lab) {
        if (!gather_per_layer)
          return;
        lab.phase = g.intern("parameter-gather");
        if (!slots[r].empty())
          slots[r].back().last = last;
        slots[r].push_back(GatherSlot{bytes, lab, {}, {}});
        opens_pass = true;
      };
      // A block pass on every TP rank, then (tp > 1) its all-reduce; the next block waits for the all-reduce.
      auto block = [&](double seconds, const char* name, const std::string& model, TaskLabels lab, bool reduce) {
        for (int k = 0; k < tp; ++k) {
          const int h = r * tp + k;
          last[k] = g.add_compute(out.compute_streams[h], seconds, name, model, lab);
          for (int d : pending[h])
            g.add_dependency(d, last[k]);
          pending[h].clear();
          if (opens_pass)
            slots[r].back().first.push_back(last[k]);
        }
        opens_pass = false;
        if (reduce && tp > 1) {
          auto done = tp_all_reduce(r, last, lab);
          for (int k = 0; k < tp; ++k)
            pending[r * tp + k] = done[k];
        }
      };
      for (int mb = 0; mb < out.microbatches; ++mb) {
        TaskLabels lab{it, 0, mb, -1, g.intern("forward")};
        for (int l = 0; l < m.layers; ++l) {
          lab.layer = l;
          gather(layer_gather_bytes, lab);
          if (tp == 1) {
            block(layer_fwd.seconds, "layer_forward", layer_fwd.model, lab, false);
          } else {
            block(attn_fwd.seconds, "attention_forward", attn_fwd.model, lab, true);
            block(mlp_fwd.seconds, "mlp_forward", mlp_fwd.model, lab, true);
          }
        }
        lab.layer = m.layers;
        gather(head_gather_bytes, lab); // the output layer (tied: the embedding) stays gathered for its backward
        block(head_fwd.seconds, "head_forward", head_fwd.model, lab, false);
        lab.phase = g.intern("backward");
        block(head_bwd.seconds, "head_backward", head_bwd.model, lab, false);
        const bool last_mb = mb == out.microbatches - 1;
        for (int l = m.layers - 1; l >= 0; --l) {
          lab.layer = l;
          gather(layer_gather_bytes, lab);
          if (tp == 1) {
            block(layer_bwd.seconds, "layer_backward", layer_bwd.model, lab, false);
          } else {
            block(mlp_bwd.seconds, "mlp_backward", mlp_bwd.model, lab, true);
            block(attn_bwd.seconds, "attention_backward", attn_bwd.model, lab, true);
          }
          if (last_mb) {
            filled += layer_grad_bytes;
            if (filled >= w.gradient_bucket.value * tp)
              close_bucket();
          }
        }
        if (last_mb) {
          filled += embedding_grad_bytes; // tied embedding: its gradient is complete after the first layer
          close_bucket();
        }
      }
    }
    // ZeRO-3 gathers, pass by pass: every replica runs the same passes, so pass s is one all-gather per TP rank.
    for (std::size_t s = 0; gather_per_layer && s < slots[0].size(); ++s)
      for (int k = 0; k < tp; ++k) {
        if (one_replica) {
          const int ready = s < 2 ? previous_optimizer[k] : slots[0][s - 2].last[k];
          const int d = add_closed_form_collective(g, comm_streams.get(k, 0), "all-gather", slots[0][s].bytes, platform,
                                                   dp_group(k), ready, slots[0][s].labels);
          g.add_dependency(d, slots[0][s].first[k]);
          continue;
        }
        CollectiveRequest ag;
        ag.kind = "all-gather";
        for (int r = 0; r < dp; ++r) {
          ag.hosts.push_back(r * tp + k);
          ag.ready.push_back(s < 2 ? previous_optimizer[r * tp + k] : slots[r][s - 2].last[k]);
        }
        ag.bytes = slots[0][s].bytes;
        ag.labels = slots[0][s].labels;
        auto done =
            expand_collective(g, comm_streams, platform, ag,
                              choose_collective("all-gather", "auto", ag.bytes, group_shape(platform, ag.hosts)));
        for (int r = 0; r < dp; ++r)
          for (int d : done[r])
            g.add_dependency(d, slots[r][s].first[k]);
      }
    // Gradients: each TP rank's shard over its data-parallel group (the same TP rank of every replica).
    std::vector<std::vector<int>> sync_done(hosts_total);
    for (std::size_t b = 0; b < bucket_ready.size(); ++b)
      for (int k = 0; k < tp; ++k) {
        if (one_replica) {
          sync_done[k].push_back(add_closed_form_collective(
              g, comm_streams.get(k, 0), sharded ? "reduce-scatter" : "all-reduce", bucket_bytes[b], platform,
              dp_group(k), bucket_ready[b][k], TaskLabels{it, 0, -1, static_cast<int>(b), g.intern("gradient-sync")}));
          continue;
        }
        SyncRequest req;
        for (int r = 0; r < dp; ++r) {
          req.hosts.push_back(r * tp + k);
          req.ready.push_back(bucket_ready[b][r * tp + k]);
        }
        req.bytes = bucket_bytes[b];
        req.labels = TaskLabels{it, 0, -1, static_cast<int>(b), g.intern("gradient-sync")};
        std::vector<std::vector<int>> done;
        if (sharded) { // ZeRO: each rank keeps the reduced 1/dp of the bucket
          CollectiveRequest rs;
          rs.kind = "reduce-scatter";
          rs.hosts = req.hosts;
          rs.ready = req.ready;
          rs.bytes = req.bytes;
          rs.labels = req.labels;
          done =
              expand_collective(g, comm_streams, platform, rs,
                                choose_collective("reduce-scatter", "auto", rs.bytes, group_shape(platform, rs.hosts)));
        } else {
          done = sync.synchronize(g, comm_streams, platform, req);
        }
        for (int r = 0; r < dp; ++r)
          sync_done[r * tp + k].insert(sync_done[r * tp + k].end(), done[r].begin(), done[r].end());
      }
    out.buckets = static_cast<int>(bucket_ready.size());
    out.optimizer_tasks.emplace_back();
    // ZeRO-1/2: each rank steps its 1/dp of the optimizer state.
    const PassCost adam = pass_cost(cost, {adam_kernel(out.parameters / tp / (sharded ? dp : 1))});
    std::vector<int> optimizer(hosts_total);
    for (int h = 0; h < built * tp; ++h) {
      TaskLabels lab{it, 0, -1, -1, g.intern("optimizer")};
      int opt = g.add_compute(out.compute_streams[h], adam.seconds, "adam", adam.model, lab);
      for (int d : sync_done[h])
        g.add_dependency(d, opt);
      out.optimizer_tasks.back().push_back(opt);
      optimizer[h] = opt;
      previous_optimizer[h] = opt;
    }
    // ZeRO-1/2: the updated parameter shards are all-gathered, bucket by bucket; the next forward waits for them.
    if (sharded && !gather_per_layer)
      for (std::size_t b = 0; b < bucket_ready.size(); ++b)
        for (int k = 0; k < tp; ++k) {
          if (one_replica) {
            pending[k].push_back(add_closed_form_collective(
                g, comm_streams.get(k, 0), "all-gather", bucket_bytes[b], platform, dp_group(k), optimizer[k],
                TaskLabels{it, 0, -1, static_cast<int>(b), g.intern("parameter-gather")}));
            continue;
          }
          CollectiveRequest ag;
          ag.kind = "all-gather";
          for (int r = 0; r < dp; ++r) {
            ag.hosts.push_back(r * tp + k);
            ag.ready.push_back(optimizer[r * tp + k]);
          }
          ag.bytes = bucket_bytes[b];
          ag.labels = TaskLabels{it, 0, -1, static_cast<int>(b), g.intern("parameter-gather")};
          auto done =
              expand_collective(g, comm_streams, platform, ag,
                                choose_collective("all-gather", "auto", ag.bytes, group_shape(platform, ag.hosts)));
          for (int r = 0; r < dp; ++r)
            pending[r * tp + k].insert(pending[r * tp + k].end(), done[r].begin(), done[r].end());
        }
  }
  g.finalize();
  return out;
}

} // namespace cs
