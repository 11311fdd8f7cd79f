#include "workloads/training/pipeline_training.hpp"

#include "models/collectives/collective_model.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"
#include "workloads/training/pipeline_graph.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace cs {

std::vector<int> partition_layers(int layers, int pp, int v, double layer_s, double head_s, bool balanced)
{
  const int stages = pp * v;
  std::vector<int> out(stages, layers / stages);
  if (!balanced || pp == 1) {
    for (int s = 0; s < layers % stages; ++s)
      ++out[s];
    return out;
  }
  // Uniform layers, and the last device also runs the output layer: choose how many layers that device keeps so
  // that the slowest device is fastest (ties: the more even split); the other devices share the rest.
  int best_last = v;
  double best = INFINITY;
  for (int last = v; last <= layers - (pp - 1) * v; ++last) {
    const double others = std::ceil(double(layers - last) / (pp - 1)) * layer_s;
    const double slowest = std::max(others, last * layer_s + head_s);
    if (slowest <= best + 1e-15) {
      best = std::min(best, slowest);
      best_last = last;
    }
  }
  std::vector<int> device(pp);
  const int rest = layers - best_last;
  for (int d = 0; d < pp - 1; ++d)
    device[d] = rest / (pp - 1) + (d < rest % (pp - 1) ? 1 : 0);
  device[pp - 1] = best_last;
  // Device d's chunks are virtual stages d, d + pp, ...; earlier chunks take any remainder.
  for (int d = 0; d < pp; ++d)
    for (int c = 0; c < v; ++c)
      out[c * pp + d] = device[d] / v + (c < device[d] % v ? 1 : 0);
  return out;
}

double tp_block_collective_seconds(const ModelParams& m, int micro, int tp, bool sequence_parallel,
                                   const PlatformSpec& platform)
{
  if (tp <= 1)
    return 0.0;
  std::vector<int> group(tp);
  for (int k = 0; k < tp; ++k)
    group[k] = k;
  const GroupShape shape = group_shape(platform, group);
  const double bytes = double(micro) * m.seq * m.hidden * dtype_bytes(m.dtype);
  return sequence_parallel ? choose_collective("reduce-scatter", "auto", bytes, shape).seconds +
                                 choose_collective("all-gather", "auto", bytes, shape).seconds
                           : choose_collective("all-reduce", "auto", bytes, shape).seconds;
}

int pipeline_host(const ParallelParams& p, int dp, int replica, int stage)
{
  const int group = p.placement == "tp-dp-pp" ? stage * dp + replica : replica * p.pp + stage;
  return group * p.tp;
}

TrainingGraph build_pipeline_training(const TrainingParams& w, const KernelCostModel& cost, int dp, int pp,
                                      const PipelineSchedule& schedule, const GradientSync& sync,
                                      const PlatformSpec& platform, bool one_replica)
{
  const ModelParams& m = w.model;
  const int v = schedule.chunks(w.parallel.vpp);
  const int stages = pp * v;
  if (w.parallel.stage_layers.empty() && w.parallel.partition == "even" && m.layers % stages != 0)
    throw std::invalid_argument("layers do not divide into pp x vpp stages");
  if (m.layers < stages)
    throw std::invalid_argument("fewer layers than pp x vpp stages");
  if (w.batch.global % (dp * w.batch.micro) != 0)
    throw std::invalid_argument("global batch does not divide into data-parallel ranks x micro batch");
  const int tp = w.parallel.tp;
  TrainingGraph out;
  out.ranks = dp * pp * tp;
  out.pipeline_stages = pp;
  out.tensor_parallel = tp;
  out.microbatches = w.batch.global / (dp * w.batch.micro);
  out.parameters = total_parameters(m);
  out.gradient_bytes = out.parameters * dtype_bytes(m.dtype) / (pp * tp);
  out.model_flops_per_iteration = megatron_model_flops(m, w.batch.global);
  out.samples_per_iteration = w.batch.global;
  out.tokens_per_iteration = double(w.batch.global) * m.seq;

  // Cost of each virtual stage for one microbatch.
  // With tensor parallelism (TP inside a node, Megatron splits), a layer pass is the TP rank's share of the
  // kernels plus Megatron's two blocking all-reduces per pass over the node's NVSwitch, priced by the collective
  // closed form: TP traffic never leaves the node, so it does not contend with the pipeline's and data-parallel
  // traffic on the NICs. Every TP rank does the same work, so the graph holds TP rank 0 of each (replica, stage)
  // group; with one NIC per GPU each rank's p2p and gradient traffic has its own NIC, as rank 0's has here.
  const bool sp = w.parallel.sequence_parallel && tp > 1;
  const auto [attn, mlp] = layer_forward_blocks(m, w.batch.micro, tp, sp);
  auto layer = attn;
  layer.insert(layer.end(), mlp.begin(), mlp.end());
  const auto head = head_forward_kernels(m, w.batch.micro);
  const PassCost forward = pass_cost(cost, layer);
  const std::string model_name = forward.model;
  const double activation = double(w.batch.micro) * m.seq * m.hidden * dtype_bytes(m.dtype);
  const double tp_all_reduce = tp_block_collective_seconds(m, w.batch.micro, tp, sp, platform);
  const double layer_f = forward.seconds + 2 * tp_all_reduce;
  double layer_b = pass_cost(cost, backward_kernels(layer)).seconds + 2 * tp_all_reduce;
  if (m.recompute == "full")
    layer_b += layer_f;
  // The output layer is vocabulary-parallel in Megatron: each TP rank computes 1/tp of the logits.
  const double head_f = pass_cost(cost, head).seconds / tp,
               head_b = pass_cost(cost, backward_kernels(head)).seconds / tp;
  out.layers_per_stage =
      partition_layers(m.layers, pp, v, layer_f + layer_b, head_f + head_b, w.parallel.partition == "balanced");
  if (!w.parallel.stage_layers.empty()) {
    if (static_cast<int>(w.parallel.stage_layers.size()) != stages)
      throw std::invalid_argument("stage_layers needs one entry per virtual stage");
    out.layers_per_stage = w.parallel.stage_layers;
  }
  std::vector<StageCost> costs(stages);
  std::vector<double> stage_params(stages);
  for (int vs = 0; vs < stages; ++vs)
    stage_params[vs] = out.layers_per_stage[vs] * layer_parameters(m) / tp;
  stage_params[0] += embedding_parameters(m) / tp;     // tied with the head; reduced with the first stage
  stage_params[stages - 1] += head_parameters(m) / tp; // an untied output layer is the last stage's own
  std::vector<int> device_layers(pp, 0);
  for (int vs = 0; vs < stages; ++vs)
    device_layers[vs % pp] += out.layers_per_stage[vs];
  out.max_layers_per_device = *std::max_element(device_layers.begin(), device_layers.end());
  out.layers_per_device = device_layers;
  for (int vs = 0; vs < stages; ++vs) {
    const int layers_here = out.layers_per_stage[vs];
    costs[vs].forward_s = layers_here * layer_f + (vs == stages - 1 ? head_f : 0.0);
    costs[vs].backward_s = layers_here * layer_b + (vs == stages - 1 ? head_b : 0.0);
    costs[vs].activation_bytes = activation / tp; // Megatron's scatter/gather: each TP rank sends its 1/tp
    costs[vs].model = model_name;
  }
  // All-reduces per layer and microbatch: 2 forward, 2 backward, and 2 more when full recomputation reruns forward.
  const int all_reduces_per_layer = m.recompute == "full" ? 6 : 4;
  out.tp_seconds_per_iteration =
      double(out.microbatches) * out.max_layers_per_device * all_reduces_per_layer * tp_all_reduce;
  append_pipeline_iterations(out, w, cost, dp, pp, tp, schedule, sync, platform, costs, stage_params, one_replica);
  out.graph.finalize();
  return out;
}

void append_pipeline_iterations(TrainingGraph& out, const TrainingParams& w, const KernelCostModel& cost, int dp,
                                int pp, int tp, const PipelineSchedule& schedule, const GradientSync& sync,
                                const PlatformSpec& platform, const std::vector<StageCost>& costs,
                                const std::vector<double>& stage_params, bool one_replica)
{
  const int built = one_replica ? 1 : dp; // replicas whose tasks are in the graph
  const ModelParams& m = w.model;
  const int stages = static_cast<int>(costs.size());
  const int v = stages / pp;
  // Per device: parameters of its chunks, and the Adam step over them.
  std::vector<double> device_params(pp, 0.0);
  for (int vs = 0; vs < stages; ++vs)
    device_params[vs % pp] += stage_params[vs];

  TaskGraph& g = out.graph;
  StreamPool streams(g);
  const int hosts_total = dp * pp; // (replica, stage) groups; group i is GPUs i*tp .. i*tp+tp-1, TP rank 0 simulated
  for (int h = 0; h < hosts_total; ++h)
    out.compute_streams.push_back(g.add_stream(pipeline_host(w.parallel, dp, h / pp, h % pp), "compute"));
  std::vector<int> previous_optimizer(hosts_total, -1);
  const double e = dtype_bytes(m.dtype);
  for (int it = 0; it < w.iterations; ++it) {
    // last_backward[r][vs]: the task after which replica r's virtual stage vs has its final gradients.
    std::vector<std::vector<int>> last_backward(dp, std::vector<int>(stages, -1));
    for (int r = 0; r < built; ++r) {
      std::vector<int> hosts(pp), compute(pp), ready(pp);
      for (int s = 0; s < pp; ++s) {
        hosts[s] = pipeline_host(w.parallel, dp, r, s);
        compute[s] = out.compute_streams[r * pp + s];
        ready[s] = previous_optimizer[r * pp + s];
      }
      PipelineTasks tasks = append_pipeline(g, streams, schedule, pp, w.parallel.vpp, out.microbatches, costs, hosts,
                                            compute, ready, TaskLabels{it, -1, -1, -1, 0});
      for (int s = 0; s < pp; ++s)
        for (std::size_t i = 0; i < tasks.order[s].size(); ++i) {
          const auto& op = tasks.order[s][i];
          if (!op.forward)
            last_backward[r][op.chunk * pp + s] = tasks.op_tasks[s][i]; // the last one in order wins
        }
      if (r == 0) {
        int peak = 0;
        out.in_flight_per_device.clear();
        for (const auto& order : tasks.order) {
          int held = 0, device_peak = 0;
          for (const auto& op : order) {
            held += op.forward ? 1 : -1;
            device_peak = std::max(device_peak, held);
          }
          out.in_flight_per_device.push_back(device_peak);
          peak = std::max(peak, device_peak);
        }
        out.in_flight_peak = peak;
        out.chunks = v;
      }
    }
    // Gradients of each virtual stage, over its data-parallel group, in buckets. ZeRO-1/2 (Megatron's distributed
    // optimizer) reduce-scatter each bucket instead, step a 1/dp shard, and all-gather the updated shard.
    const bool sharded = w.parallel.zero >= 1 && dp > 1;
    const std::string reduce = sharded ? "reduce-scatter" : "all-reduce";
    std::vector<std::vector<int>> sync_done(hosts_total);
    std::vector<std::pair<int, SyncRequest>> gathers; // (virtual stage, bucket) for the post-step all-gathers
    int buckets = 0;
    for (int vs = 0; vs < stages; ++vs) {
      const double bytes = stage_params[vs] * e;
      const int pieces = std::max(1, static_cast<int>(std::ceil(bytes / w.gradient_bucket.value)));
      SyncRequest req;
      for (int r = 0; r < dp; ++r) {
        req.hosts.push_back(pipeline_host(w.parallel, dp, r, vs % pp));
        req.ready.push_back(last_backward[r][vs]);
      }
      req.bytes = bytes / pieces;
      for (int b = 0; b < pieces; ++b, ++buckets) {
        req.labels = TaskLabels{it, vs, -1, buckets, g.intern("gradient-sync")};
        if (sharded)
          gathers.emplace_back(vs, req);
        if (one_replica) {
          sync_done[vs % pp].push_back(add_closed_form_collective(g, streams.get(req.hosts[0], 0), reduce, req.bytes,
                                                                  platform, req.hosts, req.ready[0], req.labels));
          continue;
        }
        std::vector<std::vector<int>> done;
        if (sharded) {
          CollectiveRequest rs;
          rs.kind = reduce;
          rs.hosts = req.hosts;
          rs.ready = req.ready;
          rs.bytes = req.bytes;
          rs.labels = req.labels;
          done = expand_collective(g, streams, platform, rs,
                                   choose_collective(reduce, "auto", rs.bytes, group_shape(platform, rs.hosts)));
        } else {
          done = sync.synchronize(g, streams, platform, req);
        }
        for (int r = 0; r < dp; ++r)
          sync_done[r * pp + vs % pp].insert(sync_done[r * pp + vs % pp].end(), done[r].begin(), done[r].end());
      }
    }
    out.buckets = buckets;
    out.optimizer_tasks.emplace_back();
    for (int h = 0; h < built * pp; ++h) {
      const double p = device_params[h % pp] / (sharded ? dp : 1);
      const PassCost adam = pass_cost(cost, {adam_kernel(p)});
      int opt = g.add_compute(out.compute_streams[h], adam.seconds, "adam", adam.model,
                              TaskLabels{it, h % pp, -1, -1, g.intern("optimizer")});
      for (int d : sync_done[h])
        g.add_dependency(d, opt);
      out.optimizer_tasks.back().push_back(opt);
      previous_optimizer[h] = opt;
    }
    // ZeRO-1/2: each bucket's updated shards are all-gathered; a device's next iteration starts once its
    // stages' buckets are back (a zero-length join on its compute stream).
    std::vector<std::vector<int>> gathered(hosts_total);
    for (auto& [vs, req] : gathers) {
      req.labels.phase = g.intern("parameter-gather");
      std::vector<int> after;
      for (int r = 0; r < dp; ++r)
        after.push_back(r < built ? previous_optimizer[r * pp + vs % pp] : -1);
      if (one_replica) {
        gathered[vs % pp].push_back(add_closed_form_collective(g, streams.get(req.hosts[0], 0), "all-gather", req.bytes,
                                                               platform, req.hosts, after[0], req.labels));
        continue;
      }
      CollectiveRequest ag;
      ag.kind = "all-gather";
      ag.hosts = req.hosts;
      ag.ready = after;
      ag.bytes = req.bytes;
      ag.labels = req.labels;
      auto done = expand_collective(g, streams, platform, ag,
                                    choose_collective("all-gather", "auto", ag.bytes, group_shape(platform, ag.hosts)));
      for (int r = 0; r < dp; ++r)
        gathered[r * pp + vs % pp].insert(gathered[r * pp + vs % pp].end(), done[r].begin(), done[r].end());
    }
    for (int h = 0; sharded && h < built * pp; ++h) {
      const int join = g.add_delay(out.compute_streams[h], 0, "gather-join",
                                   TaskLabels{it, h % pp, -1, -1, g.intern("parameter-gather")});
      for (int d : gathered[h])
        g.add_dependency(d, join);
      previous_optimizer[h] = join;
    }
  }
}

} // namespace cs
