#include "workloads/training/stage_costs.hpp"
#include "workloads/training/beside_communication.hpp"
#include "workloads/training/stage_memory.hpp"

#include "models/collectives/all_to_all_v.hpp"
#include "models/collectives/collective_model.hpp"
#include "models/moe/moe_layer_cost.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

namespace cs {

double StageCost::seconds(int pass) const
{
  switch (pass) {
  case 0:
    return forward_s;
  case 1:
    return backward_s;
  case 2:
    return backward_s - weight_s;
  default:
    return weight_s;
  }
}

std::vector<StageCost> with_routed_experts(const StageSet& set, const PieceTimes& experts)
{
  std::vector<StageCost> out(set.stages.size()); // the totals only
  for (std::size_t vs = 0; vs < set.stages.size(); ++vs) {
    const StageCost& c = set.stages[vs];
    int moe_layers = 0;
    for (const Segment& seg : c.segments)
      moe_layers += seg.moe ? 1 : 0;
    out[vs].forward_s = c.forward_s + moe_layers * experts.forward;
    out[vs].backward_s = c.backward_s + moe_layers * experts.backward;
    out[vs].weight_s = c.weight_s + moe_layers * experts.weight;
  }
  return out;
}

double optimizer_parameters(const StageSet& set, int device, const ParallelLayout& parallel, bool sharded)
{
  double dense = 0, experts = 0;
  for (int c = 0; c < set.map.chunks(); ++c) {
    const StageCost& stage = set.stages[set.map.stage(device, c)];
    dense += stage.params - stage.expert_params;
    experts += stage.expert_params;
  }
  const int dp = parallel.dp, copies = set.map.chains(); // DualPipe shards both copies' state over their group
  const double edp = std::max(1, dp / parallel.ep_replicas()) * copies;
  const double shards = double(parallel.shard_dp()) * parallel.cp * copies; // over dp x cp (HSDP: one shard group)
  return sharded ? dense / shards + experts / edp : dense + experts;
}

double fp8_weights(const StageSet& set, int device)
{
  double w = 0;
  for (int c = 0; c < set.map.chunks(); ++c)
    w += set.stages[set.map.stage(device, c)].fp8_weights;
  return w;
}

GatherElementBytes gather_element_bytes(const ModelParams& model, const FrameworkProfile& framework)
{
  const double e = dtype_bytes(model.dtype);
  return {e, model.fp8 && framework.fp8_param_gather ? model.fp8->quantised_bytes() / 2 : e};
}

double dense_gather_bytes(const Segment& seg, const GatherElementBytes& b)
{
  return (seg.params - seg.expert_params - seg.fp8_params) * b.element + seg.fp8_params * b.fp8;
}

double dense_gather_bytes(const StageCost& s, const GatherElementBytes& b)
{
  double bytes = 0;
  for (const Segment& seg : s.segments)
    bytes += dense_gather_bytes(seg, b);
  return bytes;
}

namespace {

// A TP group's shape: its ranks are a node's first tp GPUs.
GroupShape tp_group_shape(const PlatformSpec& platform, int tp)
{
  std::vector<int> group(tp);
  for (int k = 0; k < tp; ++k)
    group[k] = k;
  return group_shape(platform, group);
}

} // namespace

double tp_gather_seconds(const ModelParams& model, int micro, int tp, const PlatformSpec& platform, int cp)
{
  const double bytes = double(micro) * model.seq / cp * model.hidden * dtype_bytes(model.dtype);
  return choose_collective("all-gather", "auto", bytes, tp_group_shape(platform, tp)).seconds;
}

double tp_block_collective_seconds(const ModelParams& model, int micro, int tp, bool sequence_parallel,
                                   const PlatformSpec& platform, int cp)
{
  if (tp <= 1)
    return 0.0;
  const GroupShape shape = tp_group_shape(platform, tp);
  const double bytes = double(micro) * model.seq / cp * model.hidden * dtype_bytes(model.dtype);
  // Under an FP8 recipe the all-gathers move the quantised tensor, one byte an element (Transformer Engine casts
  // before it gathers) [recon: taken for the backward's gathers too]; the reduce-scatters stay in dtype.
  const double gathered = model.fp8 ? bytes / dtype_bytes(model.dtype) : bytes;
  return sequence_parallel ? choose_collective("reduce-scatter", "auto", bytes, shape).seconds +
                                 choose_collective("all-gather", "auto", gathered, shape).seconds
                           : choose_collective("all-reduce", "auto", bytes, shape).seconds;
}

TpCollectives tp_layer_collectives(const ModelParams& model, int micro, int tp, bool sequence_parallel,
                                   const PlatformSpec& platform, int cp, const FrameworkProfile& fw)
{
  TpCollectives c(tp_block_collective_seconds(model, micro, tp, sequence_parallel, platform, cp));
  // Under current FP8 scaling with sequence parallelism each gathered tensor's amax is all-reduced over the TP group
  // before it is cast (Transformer Engine's with_amax_reduction): four bytes, latency alone.
  if (tp > 1 && sequence_parallel && model.fp8 && model.fp8->amax_pass())
    c.amax_each = choose_collective("all-reduce", "auto", 4.0, tp_group_shape(platform, tp)).seconds;
  if (tp <= 1 || !fw.async_tensor_model_parallel_allreduce || fw.tp_comm_overlap)
    return c;
  // What runs beside the column-parallel GEMMs is what a pass's two collectives move: without sequence parallelism
  // their input gradients' all-reduces; with it each layer's re-gather of its saved input shard (beside the
  // data-gradient GEMM; the quantised input under FP8, as in forward) and its input gradient's reduce-scatter (beside
  // the weight-gradient GEMM). The row-parallel layers' backward is an identity, or under sequence parallelism the
  // gather of their output gradients, which blocks.
  c.backward_async = 2 * c.each;
  c.backward_each = 0;
  if (sequence_parallel)
    c.backward_each = tp_gather_seconds(model, micro, tp, platform, cp);
  return c;
}

namespace {

// The pieces of a transformer and how they are cut into virtual stages.
struct StageCut {
  PieceTimes layer, head, embedding;
  PieceTimes layer_kept;   // a layer that is not recomputed, under block recomputation
  int recompute_block = 0; // block recomputation: the first this many layers of each virtual stage rerun forward
  PieceTimes moe_layer;    // an MoE layer's dense part (its experts and all-to-alls come per step)
  PieceTimes moe_shared;   // of it, the shared experts', when they run beside the all-to-alls (else zero)
  PieceTimes mtp_entry;    // a multi-token prediction module's own kernels before its layer (lookup, norms, projection)
  int ep = 1, etp = 1;
  std::vector<int> layers_per_stage;
  StageMap map;                // which stages begin and end a copy of the model
  double activation_bytes = 0; // sent per microbatch by each TP rank
  double gather_s = 0;         // the receiver's all-gather of a scattered activation (0: none)
};

// The multi-token prediction modules on the last stage, each one segment: its lookup, norms and projection, a layer
// like the last (an MoE layer's experts and all-to-alls emitted by the builder, as for the others) and its loss through
// the shared output layer.
void add_mtp_segments(const ModelParams& model, int tp, const StageCut& cut, StageCost& c)
{
  const int like = model.layers - 1;
  const bool moe = is_moe_layer(model.moe, like);
  const PieceTimes& layer = moe ? cut.moe_layer : cut.layer;
  const double experts = routed_expert_parameters_at(model, like) / (double(cut.ep) * cut.etp);
  const double own = mtp_parameters(model) / model.mtp_depth;
  for (int d = 0; d < model.mtp_depth; ++d) {
    Segment s{"mtp",
              model.layers + d,
              cut.mtp_entry.forward + layer.forward + cut.head.forward,
              cut.mtp_entry.backward + layer.backward + cut.head.backward,
              cut.mtp_entry.weight + layer.weight + cut.head.weight,
              (own - routed_expert_parameters_at(model, like)) / tp + experts};
    s.moe = moe;
    s.expert_params = moe ? experts : 0.0;
    s.shared_forward_s = moe ? cut.moe_shared.forward : 0.0;
    s.shared_backward_s = moe ? cut.moe_shared.backward : 0.0;
    c.params += s.params;
    c.expert_params += s.expert_params;
    c.forward_s += s.forward_s;
    c.backward_s += s.backward_s;
    c.weight_s += s.weight_s;
    c.segments.push_back(s);
  }
}

// One virtual stage: its layers, the embedding on the first, the output layer on the last, and the gathers of what
// it receives.
StageCost cut_stage(const ModelParams& model, int tp, const StageCut& cut, int vs, int first_layer)
{
  const int here = cut.layers_per_stage[vs];
  const PieceTimes &layer = cut.layer, &head = cut.head, &embedding = cut.embedding;
  StageCost c;
  const bool first = cut.map.chain_first(vs), last = cut.map.chain_last(vs);
  c.forward_s = here * layer.forward + (last ? head.forward : 0.0) + (first ? embedding.forward : 0.0);
  c.backward_s = here * layer.backward + (last ? head.backward : 0.0) + (first ? embedding.backward : 0.0);
  c.weight_s = here * layer.weight + (last ? head.weight : 0.0) + (first ? embedding.weight : 0.0);
  // Block recomputation: past the first recompute_block layers of the stage, layers keep their activations.
  const int recomputed = cut.recompute_block > 0 ? std::min(cut.recompute_block, here) : here;
  if (recomputed < here)
    c.backward_s += (here - recomputed) * (cut.layer_kept.backward - layer.backward);
  c.params = here * layer_parameters(model) / tp;
  c.activation_bytes = cut.activation_bytes;
  c.model = layer.model;
  if (first) { // the embedding (tied with the head) is reduced with the first stage
    c.params += embedding_parameters(model) / tp;
    // ZeRO-3 gathers it once per microbatch, for the lookup and (tied) the logits, and keeps it for backward.
    c.segments.push_back({"embedding", -1, embedding.forward, embedding.backward, embedding.weight,
                          embedding_parameters(model) / tp, true});
  }
  // Under an FP8 recipe, the GEMM weights it casts once a step, as memory counts their copies: a dense layer's, an MoE
  // layer's attention and routed experts.
  const double fp8 = model.fp8 ? 1.0 : 0.0;
  for (int l = first_layer; l < first_layer + here; ++l) {
    if (!is_moe_layer(model.moe, l)) {
      const PieceTimes& t = l - first_layer < recomputed ? layer : cut.layer_kept;
      c.segments.push_back({"layer", l, t.forward, t.backward, t.weight, layer_parameters(model) / tp, false});
      c.segments.back().fp8_params = fp8 * layer_gemm_weights(model) / tp;
      c.fp8_weights += c.segments.back().fp8_params;
      continue;
    }
    const PieceTimes& moe = cut.moe_layer;
    const double experts = routed_expert_parameters_at(model, l) / (double(cut.ep) * cut.etp);
    Segment s{"moe_layer", l,
              moe.forward, moe.backward,
              moe.weight,  (layer_parameters_at(model, l) - routed_expert_parameters_at(model, l)) / tp + experts};
    s.moe = true;
    s.expert_params = experts;
    s.fp8_params = fp8 * attention_kind_of(model).weights(model) / tp;
    s.shared_forward_s = cut.moe_shared.forward;
    s.shared_backward_s = cut.moe_shared.backward;
    c.params += s.params - layer_parameters(model) / tp; // the total above counted it as a dense layer
    c.expert_params += experts;
    c.fp8_weights += s.fp8_params + fp8 * experts;
    c.forward_s += moe.forward - layer.forward;
    c.backward_s += moe.backward - layer.backward;
    c.weight_s += moe.weight - layer.weight;
    c.segments.push_back(s);
  }
  if (last)
    add_mtp_segments(model, tp, cut, c);
  if (last) { // an untied output layer is the last stage's own
    c.params += head_parameters(model) / tp;
    c.segments.push_back(
        {"head", model.layers, head.forward, head.backward, head.weight, head_parameters(model) / tp, true});
  }
  // The receiver gathers before its pass: forward from the previous stage, backward from the next (backward runs
  // the segments in reverse).
  if (cut.gather_s > 0 && !c.segments.empty()) {
    if (!first) {
      c.forward_s += cut.gather_s;
      c.segments.front().forward_s += cut.gather_s;
    }
    if (!last) {
      c.backward_s += cut.gather_s;
      c.segments.back().backward_s += cut.gather_s;
    }
  }
  return c;
}

// Block recomputation: a layer past the first recompute_num_layers of its virtual stage keeps everything (the
// pieces' layer_kept); the hardware FLOPs and TP collectives follow the share of layers that do rerun.
void recompute_block(const TrainingParams& params, const StagePieces& pieces, StageCut& cut, StageSet& out)
{
  const ModelParams& model = params.model;
  cut.layer_kept = pieces.layer_kept;
  cut.recompute_block = model.recompute_num_layers;
  int recomputed = 0;
  for (int here : out.layers_per_stage)
    recomputed += std::min(here, model.recompute_num_layers);
  const double share =
      double(recomputed) / (double(model.layers) * out.map.chains()); // the layers whose forward reruns
  out.hardware_flops_per_iteration = hardware_model_flops(model, params.batch.global, share);
  out.tp_seconds_per_layer *= (4 + 2 * share) / 6;
  out.tp_bytes_per_layer *= (4 + 2 * share) / 6;
}

} // namespace

StageSet transformer_stages(const TrainingParams& params, const KernelCostModel& cost, const PlatformSpec& platform,
                            const StageShape& shape)
{
  return transformer_stages(params, platform, shape, price_stage_pieces(params, cost, platform, shape.parallel));
}

StageSet transformer_stages(const TrainingParams& params, const PlatformSpec& platform, const StageShape& shape,
                            const StagePieces& pieces)
{
  const ModelParams& model = params.model;
  const ParallelLayout& parallel = shape.parallel;
  // The stages of one copy of the model (DualPipe runs two, cut alike).
  const int stages = shape.map.stages(), chain = shape.map.chain_length(), tp = parallel.tp;
  const int slots = params.parallel.pipeline_slots(model.layers); // layers, and the embedding's and loss's slots
  if ((params.parallel.stage_layers.empty() && params.parallel.partition == StagePartition::EVEN &&
       slots % chain != 0) ||
      slots < chain)
    throw std::invalid_argument("layers do not divide into pp x vpp stages, or are fewer");
  const FrameworkProfile& fw = params.framework;
  PieceTimes layer = pieces.layer;
  const bool dp_beside = shape.price_dp_beside && parallel.dp > 1;
  if (parallel.zero >= 3 && dp_beside && fw.comm_sm_fraction > 0)
    slow_beside_zero3(layer, model, tp, fw, zero_groups(parallel, platform));
  StageSet out;
  out.parameters = total_parameters(model);
  out.model_flops_per_iteration = megatron_model_flops(model, params.batch.global);
  out.hardware_flops_per_iteration = hardware_model_flops(model, params.batch.global);
  out.tp_seconds_per_layer = pieces.tp_seconds_per_layer;
  out.tp_bytes_per_layer = pieces.tp_bytes_per_layer;
  out.cp_seconds_per_layer = pieces.cp_seconds_per_layer;
  out.cp_intra_bytes_per_layer = pieces.cp_intra_bytes_per_layer;
  out.cp_inter_bytes_per_layer = pieces.cp_inter_bytes_per_layer;
  out.map = shape.map;
  const PieceTimes &head = pieces.head, &embedding = pieces.embedding;
  out.layers_per_stage = stage_layer_counts(params, shape.map, layer.forward + layer.backward,
                                            head.forward + head.backward, embedding.forward + embedding.backward);
  StageCut cut;
  cut.layer = layer;
  if (model.recompute == Recompute::FULL && model.recompute_method == RecomputeMethod::BLOCK)
    recompute_block(params, pieces, cut, out);
  cut.head = head;
  cut.embedding = embedding;
  cut.moe_layer = pieces.moe_layer;
  cut.moe_shared = pieces.moe_shared;
  cut.mtp_entry = pieces.mtp_entry;
  cut.ep = parallel.ep;
  cut.etp = parallel.expert_tp();
  cut.layers_per_stage = out.layers_per_stage;
  cut.activation_bytes = pieces.activation_bytes;
  cut.gather_s = pieces.gather_s;
  cut.map = shape.map;
  for (int vs = 0, first_layer = 0; vs < stages; first_layer += out.layers_per_stage[vs], ++vs) {
    if (shape.map.chain_first(vs))
      first_layer = 0;
    out.stages.push_back(cut_stage(model, tp, cut, vs, first_layer));
  }
  if (dp_beside && parallel.zero < 3 && fw.overlap != GradientOverlap::AFTER_BACKWARD && fw.comm_sm_fraction > 0)
    slow_beside_reduction(out.stages, params, parallel.zero, zero_groups(parallel, platform));
  out.memory = stage_memory(params, out.layers_per_stage, shape, platform.hosts_per_machine);
  return out;
}

} // namespace cs
