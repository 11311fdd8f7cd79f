#include "workloads/training/stage_memory.hpp"

#include "models/kernels/kernel.hpp"
#include "models/moe/token_dispatcher.hpp"
#include "models/transformer/transformer.hpp"

#include <algorithm>

namespace cs {

void set_gradient_buffer(MemoryLayout& layout, const TrainingParams& params, const ParallelLayout& parallel)
{
  const long long per_step = static_cast<long long>(params.batch.micro) * std::max(1, parallel.dp);
  layout.accumulation_steps =
      per_step > 0 ? static_cast<int>(std::max<long long>(1, params.batch.global / per_step)) : 1;
  layout.reduce_every_microbatch = params.framework.reduce_every_microbatch;
  layout.main_grad_bytes = dtype_bytes(params.framework.main_grad_dtype(params.model.dtype));
  layout.sharded_grad_bytes = dtype_bytes(params.framework.reduce_dtype_for(params.model.dtype));
  // FSDP2 under torch.distributed.pipelining keeps a stage gathered and syncs its gradients only on the last backward,
  // accumulating them whole in the reduce dtype meanwhile (FSDPParam.to_accumulated_grad_if_needed).
  layout.keeps_unsharded = params.framework.keeps_stages_gathered(parallel);
  if (layout.keeps_unsharded) {
    layout.reduce_every_microbatch = false;
    layout.main_grad_bytes = layout.sharded_grad_bytes;
  }
}

double dispatcher_buffer_bytes(const TrainingParams& params, const ParallelLayout& parallel, int gpus_per_node)
{
  const MoeParams& moe = params.model.moe;
  if (!moe.enabled())
    return 0;
  DispatchBufferShape s;
  s.ranks = parallel.ep;
  s.gpus_per_node = gpus_per_node;
  s.hidden = params.model.hidden;
  // Megatron-Core sizes them for the hidden size at 16 bits or more a value (get_hidden_bytes in its fused_a2a.py).
  s.hidden_bytes = params.model.hidden * std::max(2.0, dtype_bytes(params.model.dtype));
  // A rank's tokens of a microbatch: its share of the sequence under context and (sequence-parallel) tensor
  // parallelism.
  s.tokens = double(params.batch.micro) * params.model.seq / std::max(1, parallel.cp) /
             (parallel.sequence_parallel ? std::max(1, parallel.tp) : 1);
  s.experts_per_rank = std::max(1, moe.experts / std::max(1, parallel.ep));
  s.sms = moe.dispatcher_sms();
  return token_dispatcher(moe.dispatcher).buffer_bytes(s);
}

std::function<MemoryFootprint(int, int, const MoeMemoryUse&)> stage_memory(const TrainingParams& params,
                                                                           const std::vector<int>& stage_layers,
                                                                           const StageShape& shape, int gpus_per_node)
{
  const ParallelLayout parallel = shape.parallel;
  const StageMap map = shape.map;
  const double dispatcher_buffers = dispatcher_buffer_bytes(params, parallel, gpus_per_node);
  return [stage_layers, params, parallel, map, dispatcher_buffers](int device, int in_flight, const MoeMemoryUse& moe) {
    MemoryLayout layout;
    layout.parallel = parallel;
    layout.dispatcher_buffer_bytes = dispatcher_buffers;
    layout.bucket_bytes = params.gradient_bucket.value;
    layout.layers_on_device = 0;
    layout.moe_buffer_scale = moe.buffer_scale;
    layout.extra_expert_slots = moe.extra_slots;
    layout.moe_layers_on_device = 0;
    const int v = map.chunks();
    for (int c = 0; c < v; ++c) {
      const int vs = map.stage(device, c);
      int first = 0; // the stage's first layer in its copy of the model
      for (int k = vs - map.position(vs); k < vs; ++k)
        first += stage_layers[k];
      layout.layers_on_device += stage_layers[vs];
      for (int l = first; l < first + stage_layers[vs]; ++l)
        layout.moe_layers_on_device += is_moe_layer(params.model.moe, l) ? 1 : 0;
      if (map.chain_last(vs)) { // the MTP modules' layers, like the last
        layout.layers_on_device += params.model.mtp_depth;
        if (is_moe_layer(params.model.moe, params.model.layers - 1))
          layout.moe_layers_on_device += params.model.mtp_depth;
      }
    }
    layout.in_flight_microbatches = double(in_flight) / v; // each chunk holds 1/v of the device's layers
    const int n = params.model.recompute_num_layers;
    if (params.model.recompute == Recompute::FULL && n > 0) { // over the device's virtual stages
      layout.checkpoints_on_device = layout.recomputed_layers_on_device = 0;
      for (int c = 0; c < v; ++c) {
        const int here = stage_layers[map.stage(device, c)];
        layout.checkpoints_on_device += (here + n - 1) / n;
        layout.recomputed_layers_on_device += std::min(here, n);
      }
    }
    apply_framework(layout, params.framework, params.model.dtype);
    set_gradient_buffer(layout, params, parallel);
    layout.holds_head = map.holds_chain_last(device);
    layout.model_copies = map.chains();
    return transformer_memory(params.model, params.batch.micro, layout);
  };
}

} // namespace cs
