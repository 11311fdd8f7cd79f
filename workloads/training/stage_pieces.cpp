#include "workloads/training/stage_pieces.hpp"
#include "workloads/training/stage_costs.hpp"

#include "models/collectives/collective_model.hpp"
#include "models/moe/moe_layer_cost.hpp"
#include "models/transformer/attention_kind.hpp"
#include "models/transformer/transformer.hpp"

#include <algorithm>
#include <utility>

namespace cs {

namespace {

// Context parallelism's key and value exchange in one layer's forward and backward of one microbatch, what of it
// shows, by the tuner's closed forms over the layout's CP group (its ranks in nodes first: tp innermost, then cp).
// p2p (ring attention): cp - 1 sends of the rank's keys and values, as a ring all-gather moves them, each hidden
// behind the attention block computing beside it; backward sends them again with their gradients, the last gradients'
// send shown. allgather: the
// keys and values gathered whole before attention, their gradients reduce-scattered after, nothing hidden. a2a
// (Ulysses): queries, keys and values traded for a head split before attention, the output back after, in each pass.
PieceTimes cp_exchange(const ModelParams& model, const LayerShape& shape, const PassKernels& layer,
                       const KernelCostModel& cost, const PlatformSpec& platform)
{
  const ParallelLayout& l = shape.parallel;
  PieceTimes out;
  if (l.cp <= 1)
    return out;
  const GroupShape group = group_shape(platform, l.cp_group(0, 0));
  const AttentionWidths w = attention_kind_of(model).widths(model);
  const double e = dtype_bytes(model.dtype), tokens = shape.tokens(model), cp = l.cp;
  const double kv = tokens * (w.key + w.value) / l.tp * e; // this rank's keys and values
  auto seconds = [&group](const char* kind, double bytes) {
    return choose_collective(kind, "auto", bytes, group).seconds;
  };
  auto core = [&cost](const std::vector<NamedKernel>& pass, const char* name) {
    for (const auto& k : pass)
      if (k.name == name)
        return cost.predict(k.kernel).total;
    return 0.0;
  };
  if (l.cp_comm == CpComm::P2P) {
    const double hidden_f =
        (core(layer.forward, "attention") + core(layer.forward, "attention_ring_steps")) * (cp - 1) / cp;
    const double hidden_b =
        (core(layer.backward, "attention_backward") + core(layer.backward, "attention_ring_steps_backward")) *
        (cp - 1) / cp;
    // Backward, the last step's key and value gradients go back to their owner after the last block: Transformer
    // Engine waits for that send with no attention left to hide it.
    const double ring = seconds("all-gather", cp * kv), last = ring / (cp - 1);
    out.forward = std::max(0.0, ring - hidden_f);
    out.backward = std::max(0.0, 2 * ring - last - hidden_b) + last;
  } else if (l.cp_comm == CpComm::ALLGATHER) {
    out.forward = seconds("all-gather", cp * kv);
    out.backward = seconds("all-gather", cp * kv) + seconds("reduce-scatter", cp * kv);
  } else {
    const double qkv = tokens * (w.query + w.key + w.value) / l.tp * e, output = tokens * w.output / l.tp * e;
    out.forward = seconds("all-to-all", qkv) + seconds("all-to-all", output);
    out.backward = out.forward;
  }
  if (model.recompute == Recompute::FULL) // the forward runs again inside backward, its exchange with it
    out.backward += out.forward;
  return out;
}

// What context parallelism's exchange moves in one layer's passes of one microbatch, over the ranks of one CP group
// (TP rank 0's; each TP rank has its own), inside nodes and between them. p2p and allgather move cp - 1 of each rank's
// keys and values to its ring neighbour forward and twice that backward (their gradients too), as cp_exchange prices
// them; a2a sends (cp - 1) / cp of each rank's queries, keys, values and output to the others, in each pass. Full
// recomputation runs the forward's exchange again.
std::pair<double, double> cp_exchange_bytes(const ModelParams& model, const LayerShape& shape,
                                            const PlatformSpec& platform)
{
  const ParallelLayout& l = shape.parallel;
  if (l.cp <= 1)
    return {0.0, 0.0};
  const std::vector<int> hosts = l.cp_group(0, 0);
  const auto machine = machines_of(platform, hosts);
  const int cp = l.cp;
  const AttentionWidths w = attention_kind_of(model).widths(model);
  const double e = dtype_bytes(model.dtype), tokens = shape.tokens(model);
  const double passes = model.recompute == Recompute::FULL ? 4 : 3; // forward, backward twice (values, gradients)
  double crossing = 0;                                              // share of each rank's sends that leave its node
  if (l.cp_comm == CpComm::A2A) {
    for (int i = 0; i < cp; ++i)
      for (int j = 0; j < cp; ++j)
        crossing += i != j && machine[i] != machine[j] ? 1.0 / (double(cp) * (cp - 1)) : 0.0;
  } else {
    for (int i = 0; i < cp; ++i)
      crossing += machine[i] != machine[(i + 1) % cp] ? 1.0 / cp : 0.0;
  }
  double bytes = 0; // the whole group's, all passes
  if (l.cp_comm == CpComm::A2A) {
    const double per_rank = tokens * (w.query + w.key + w.value + w.output) / l.tp * e * (cp - 1) / cp;
    bytes = cp * per_rank * (model.recompute == Recompute::FULL ? 3 : 2);
  } else {
    bytes = cp * (cp - 1.0) * tokens * (w.key + w.value) / l.tp * e * passes;
  }
  return {bytes * (1 - crossing), bytes * crossing};
}

// The dense part of an MoE layer for one microbatch on one TP rank: attention, router, permutations, shared experts
// (its routed experts and all-to-alls are priced per step by the builder).
PieceTimes moe_dense_part(const TrainingParams& params, const KernelCostModel& cost, const LayerShape& shape,
                          const TpCollectives& tp_s, const PlatformSpec& platform, bool shared = true)
{
  const ModelParams& model = params.model;
  const PassKernels k = moe_layer_kernels(model, shape, shared);
  const PieceTimes cp = cp_exchange(model, shape, k, cost, platform);
  // Only its attention's linears are tensor-parallel with sequence parallelism (the experts are not), so only the QKV
  // input's and the output projection's gradient's amax reductions happen: one a pass, not a dense layer's two.
  TpCollectives moe_tp = tp_s;
  moe_tp.amax_each /= 2;
  PieceTimes t =
      piece_times(k, cost, shape.framework, moe_tp, model.recompute, shape.parallel.tp, model.recompute_modules);
  t.forward += cp.forward;
  t.backward += cp.backward;
  return t;
}
// An MoE layer's dense part and, when they run beside the all-to-alls, the shared experts' share of it.
void price_moe_layer(StagePieces& p, const TrainingParams& params, const KernelCostModel& cost, const LayerShape& shape,
                     const TpCollectives& tp_s, const PlatformSpec& platform)
{
  p.moe_layer = moe_dense_part(params, cost, shape, tp_s, platform);
  if (params.model.moe.shared_experts == 0 || !params.framework.moe_shared_expert_overlap)
    return;
  const PieceTimes rest = moe_dense_part(params, cost, shape, tp_s, platform, false);
  p.moe_shared.forward = p.moe_layer.forward - rest.forward;
  p.moe_shared.backward = p.moe_layer.backward - rest.backward;
  p.moe_shared.weight = p.moe_layer.weight - rest.weight;
}

// Block recomputation: a layer past the first recompute_num_layers of its virtual stage keeps everything and runs its
// passes without recomputation (and its CP exchange once).
PieceTimes kept_layer(const TrainingParams& params, const LayerShape& shape, const PassKernels& layer_passes,
                      const KernelCostModel& cost, const TpCollectives& tp_s, const PlatformSpec& platform)
{
  ModelParams kept_model = params.model;
  kept_model.recompute = Recompute::NONE;
  PieceTimes kept = piece_times(layer_passes, cost, params.framework, tp_s, Recompute::NONE, shape.parallel.tp,
                                params.model.recompute_modules);
  const PieceTimes kept_cp = cp_exchange(kept_model, shape, layer_passes, cost, platform);
  kept.forward += kept_cp.forward;
  kept.backward += kept_cp.backward;
  return kept;
}

} // namespace

StagePieces price_stage_pieces(const TrainingParams& params, const KernelCostModel& cost, const PlatformSpec& platform,
                               const ParallelLayout& parallel)
{
  const ModelParams& model = params.model;
  const FrameworkProfile& fw = params.framework;
  const int tp = parallel.tp, cp = parallel.cp, micro = params.batch.micro;
  const bool sp = parallel.sp();
  const LayerShape shape{micro, parallel, fw};
  const TpCollectives tp_s = tp_layer_collectives(model, micro, tp, sp, platform, cp, fw);
  const PassKernels layer_passes = layer_kernels(model, shape);
  StagePieces p;
  p.layer = piece_times(layer_passes, cost, fw, tp_s, model.recompute, tp, model.recompute_modules);
  // TP collectives per layer and microbatch: 2 forward, 2 backward, 2 more when full recomputation reruns forward;
  // what of them shows in the passes (all, or a chunk of each when overlapped with the GEMMs or, in backward, what
  // the column-parallel GEMMs leave of the asynchronous ones). Sequence parallelism's asynchronous backward also
  // re-gathers each column-parallel layer's input: two more all-gathers' bytes.
  const int collectives = model.recompute == Recompute::FULL ? 6 : 4;
  const bool async = tp_s.backward_each >= 0;
  p.tp_seconds_per_layer = collectives * tp_s.each;
  if ((fw.tp_comm_overlap || async) && tp > 1) { // the passes with and without the collectives (priced again here)
    const PieceTimes bare = piece_times(layer_passes, cost, fw, 0, model.recompute, tp, model.recompute_modules);
    p.tp_seconds_per_layer = p.layer.forward + p.layer.backward - bare.forward - bare.backward;
  }
  // A ring all-reduce (or reduce-scatter plus all-gather) of S bytes moves 2 (tp - 1) / tp S from each of tp ranks.
  p.tp_bytes_per_layer = tp > 1 ? (collectives + (async && sp ? 1 : 0)) * 2.0 * (tp - 1) * double(micro) * model.seq /
                                      cp * model.hidden * dtype_bytes(model.dtype)
                                : 0.0;
  const PieceTimes cp_s = cp_exchange(model, shape, layer_passes, cost, platform);
  p.layer.forward += cp_s.forward;
  p.layer.backward += cp_s.backward;
  p.cp_seconds_per_layer = cp_s.forward + cp_s.backward;
  std::tie(p.cp_intra_bytes_per_layer, p.cp_inter_bytes_per_layer) = cp_exchange_bytes(model, shape, platform);
  p.head = piece_times(head_kernels(model, shape), cost, fw, 0, Recompute::NONE);
  p.embedding = piece_times(embedding_kernels(model, shape), cost, fw, 0, Recompute::NONE);
  if (model.recompute == Recompute::FULL && model.recompute_method == RecomputeMethod::BLOCK)
    p.layer_kept = kept_layer(params, shape, layer_passes, cost, tp_s, platform);
  if (model.moe.enabled())
    price_moe_layer(p, params, cost, shape, tp_s, platform);
  if (model.mtp_depth > 0)
    p.mtp_entry = piece_times(mtp_entry_kernels(model, shape), cost, fw, 0, Recompute::NONE);
  // Sequence parallelism already splits the activation over the TP ranks; Megatron-LM 2021 scattered it for the send
  // and all-gathered it (inside the node) on arrival; otherwise every TP rank sends it whole.
  const double activation = double(micro) * model.seq / cp * model.hidden * dtype_bytes(model.dtype);
  const bool scatter_gather = tp > 1 && !sp && fw.pipeline_scatter_gather;
  p.activation_bytes = sp || scatter_gather ? activation / tp : activation;
  p.gather_s = scatter_gather ? tp_gather_seconds(model, micro, tp, platform, cp) : 0.0;
  return p;
}

} // namespace cs
