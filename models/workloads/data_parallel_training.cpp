#include "models/workloads/data_parallel_training.hpp"

#include "models/workloads/pass_cost.hpp"

#include <map>
#include <stdexcept>

namespace cs {

TrainingGraph build_data_parallel_training(const WorkloadParams& w, const KernelCostModel& cost, int ranks,
                                           const GradientSync& sync, const PlatformSpec& platform)
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

  const auto layer_kernels = layer_forward_kernels(m, w.batch.micro);
  const auto head_kernels = head_forward_kernels(m, w.batch.micro);
  const PassCost layer_fwd = pass_cost(cost, layer_kernels);
  PassCost layer_bwd = pass_cost(cost, backward_kernels(layer_kernels));
  if (m.recompute == "full") // the forward pass runs again inside backward
    layer_bwd.seconds += layer_fwd.seconds;
  const PassCost head_fwd = pass_cost(cost, head_kernels);
  const PassCost head_bwd = pass_cost(cost, backward_kernels(head_kernels));
  // Mixed-precision Adam: reads 16-bit weight and gradient plus fp32 master, m and v; writes all but the gradient.
  const PassCost optimizer =
      pass_cost(cost, {{"adam", BandwidthKernel{"adam", 16.0 * out.parameters, 14.0 * out.parameters,
                                                10.0 * out.parameters, "fp32"}}});
  const double layer_grad_bytes = layer_parameters(m) * dtype_bytes(m.dtype);
  const double embedding_grad_bytes = embedding_parameters(m) * dtype_bytes(m.dtype);

  TaskGraph& g = out.graph;
  for (int r = 0; r < ranks; ++r)
    out.compute_streams.push_back(g.add_stream(r, "compute"));
  StreamPool comm_streams(g);
  std::vector<int> previous_optimizer(ranks, -1);
  for (int it = 0; it < w.iterations; ++it) {
    // Buckets close at the same layer on every rank; collect per bucket the producing task of each rank.
    std::vector<std::vector<int>> bucket_ready; // [bucket][rank]
    std::vector<double> bucket_bytes;
    for (int r = 0; r < ranks; ++r) {
      const int cs = out.compute_streams[r];
      double filled = 0;
      int bucket = 0;
      auto close_bucket = [&](int task) {
        if (r == 0) {
          bucket_ready.emplace_back(ranks, -1);
          bucket_bytes.push_back(filled);
        }
        bucket_ready[bucket][r] = task;
        ++bucket;
        filled = 0;
      };
      for (int mb = 0; mb < out.microbatches; ++mb) {
        TaskLabels lab{it, 0, mb, -1, g.intern("forward")};
        for (int l = 0; l < m.layers; ++l) {
          lab.layer = l;
          g.add_compute(cs, layer_fwd.seconds, "layer_forward", layer_fwd.model, lab);
        }
        lab.layer = m.layers;
        g.add_compute(cs, head_fwd.seconds, "head_forward", head_fwd.model, lab);
        lab.phase = g.intern("backward");
        int t = g.add_compute(cs, head_bwd.seconds, "head_backward", head_bwd.model, lab);
        const bool last = mb == out.microbatches - 1;
        for (int l = m.layers - 1; l >= 0; --l) {
          lab.layer = l;
          t = g.add_compute(cs, layer_bwd.seconds, "layer_backward", layer_bwd.model, lab);
          if (last) {
            filled += layer_grad_bytes;
            if (filled >= w.gradient_bucket.value)
              close_bucket(t);
          }
        }
        if (last) {
          filled += embedding_grad_bytes; // tied embedding: its gradient is complete after the first layer
          close_bucket(t);
        }
      }
    }
    std::vector<std::vector<int>> sync_done(ranks);
    for (std::size_t b = 0; b < bucket_ready.size(); ++b) {
      SyncRequest req;
      for (int r = 0; r < ranks; ++r)
        req.hosts.push_back(r);
      req.ready = bucket_ready[b];
      req.bytes = bucket_bytes[b];
      req.labels = TaskLabels{it, 0, -1, static_cast<int>(b), g.intern("gradient-sync")};
      auto done = sync.synchronize(g, comm_streams, platform, req);
      for (int r = 0; r < ranks; ++r)
        sync_done[r].insert(sync_done[r].end(), done[r].begin(), done[r].end());
    }
    out.buckets = static_cast<int>(bucket_ready.size());
    out.optimizer_tasks.emplace_back();
    for (int r = 0; r < ranks; ++r) {
      TaskLabels lab{it, 0, -1, -1, g.intern("optimizer")};
      int opt = g.add_compute(out.compute_streams[r], optimizer.seconds, "adam", optimizer.model, lab);
      for (int d : sync_done[r])
        g.add_dependency(d, opt);
      out.optimizer_tasks.back().push_back(opt);
      previous_optimizer[r] = opt;
    }
  }
  g.finalize();
  return out;
}

} // namespace cs
