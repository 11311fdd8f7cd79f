#include "workloads/training/training_params.hpp"

#include "models/parallel/pipeline_layout.hpp"

#include "base/units.hpp"

#include <fmt/format.h>

namespace cs {
namespace {
// Bounds on user counts (docs/scenarios.md, "Bounds"): large enough for any cluster built so far, small enough that
// every product of them fits 64-bit integers and doubles stay exact.
constexpr double kMaxSamples = 1 << 24;
constexpr double kMaxGpus = 1 << 20;
constexpr double kMaxIterations = 10000;
} // namespace

int ParallelParams::dp_on(long long gpus) const
{
  const long long model_ranks = static_cast<long long>(tp) * cp * pp;
  return dp > 0 ? dp : static_cast<int>(gpus / model_ranks);
}

ParallelLayout ParallelParams::layout(long long gpus) const
{
  ParallelLayout out;
  out.tp = tp;
  out.cp = cp;
  out.pp = pp;
  out.vpp = vpp;
  out.ep = ep;
  out.etp = etp;
  out.dp = dp_on(gpus);
  out.zero = zero;
  out.dp_replicate = dp_replicate;
  out.sequence_parallel = sequence_parallel;
  out.cp_comm = cp_comm;
  out.placement = placement;
  return out;
}

void ParallelParams::assign(const ParallelLayout& l)
{
  tp = l.tp;
  cp = l.cp;
  pp = l.pp;
  vpp = l.vpp;
  ep = l.ep;
  etp = l.etp;
  dp = l.dp;
  zero = l.zero;
  dp_replicate = l.dp_replicate;
  sequence_parallel = l.sequence_parallel;
  cp_comm = l.cp_comm;
  placement = l.placement;
}

namespace {

// `interval` is a duration or `optimal`.
void read_checkpoint(ObjectReader c, CheckpointParams& checkpoint)
{
  std::string interval = "1h";
  c.field("interval", interval, "productive time between checkpoints (a duration), or optimal")
      .choice(
          "mode", checkpoint.mode,
          {{"sync", CheckpointMode::SYNC}, {"async", CheckpointMode::ASYNC}, {"in-memory", CheckpointMode::IN_MEMORY}},
          "sync (wait for storage), async (wait for the copy to host memory only) or in-memory (to a peer node)")
      .field("storage_interval", checkpoint.storage_interval,
             "in-memory: productive time between copies to persistent storage, what the job falls back to when a "
             "node and its partner both fail (0 = none: it starts over)");
  c.finish();
  c.require(!c.has("storage_interval") || checkpoint.mode == CheckpointMode::IN_MEMORY, "storage_interval",
            "storage_interval is for mode in-memory (the other modes write to storage each time)");
  c.require_non_negative("storage_interval", checkpoint.storage_interval.value);
  c.require_at_most("storage_interval", checkpoint.storage_interval.value, 365 * 86400.0);
  if (c.describing() || (!c.has("interval") && !c.has("mode")))
    return;
  checkpoint.given = true;
  if (interval == "optimal") {
    checkpoint.optimal = true;
    return;
  }
  std::string error;
  const auto seconds = units::parse_time(interval, &error);
  if (!seconds)
    c.fail_at("interval", "interval: " + error + " (a duration such as 30min, or optimal)");
  checkpoint.interval = Seconds{*seconds};
  c.require_positive("interval", checkpoint.interval.value);
  c.require_at_most("interval", checkpoint.interval.value, 30 * 86400.0);
}

// parallel.pipeline_layout into stage_layers. Its stage count against pp x chunks is the checks' (the schedule sets
// the chunks); here the string itself, and what the model must agree with.
void read_pipeline_layout(const ObjectReader& p, TrainingParams& params)
{
  ParallelParams& par = params.parallel;
  if (par.pipeline_layout.empty() || p.describing())
    return;
  PipelineLayout layout;
  try {
    layout = parse_pipeline_layout(par.pipeline_layout);
  } catch (const LayoutError& e) {
    p.fail_at("pipeline_layout", fmt::format("at character {}: {}", e.offset() + 1, e.what()));
  }
  if (!par.stage_layers.empty() || par.account_for_embedding || par.account_for_loss)
    p.fail_at("pipeline_layout", "a pipeline layout places every layer itself: leave out stage_layers and the "
                                 "account_for_embedding / account_for_loss keys");
  const int last = layout.stages() - 1;
  if (layout.embedding_stage != 0)
    p.fail_at("pipeline_layout",
              fmt::format("E (the embedding) is in stage {}; it must be in the first", layout.embedding_stage));
  if (layout.loss_stage != last)
    p.fail_at("pipeline_layout", fmt::format("L (the loss) is in stage {} of {}; it must be in the last",
                                             layout.loss_stage, layout.stages()));
  int mtp = 0;
  for (int s = 0; s < layout.stages(); ++s) {
    mtp += layout.mtp[s];
    // The MTP module is modelled on the output layer's stage; a stage of MTP alone just before an L-only last stage
    // (Megatron's DeepSeek-V3 example) is read as that.
    const bool beside_loss = s == last || (s + 1 == last && layout.layers[last] == 0 && layout.layers[s] == 0);
    if (layout.mtp[s] > 0 && !beside_loss)
      p.fail_at("pipeline_layout", fmt::format("m (an MTP layer) in stage {}: clustersim runs the MTP module with the "
                                               "loss, in the last stage or an MTP-only stage just before it",
                                               s));
  }
  if (mtp != params.model.mtp_depth)
    p.fail_at("pipeline_layout", fmt::format("the layout has {} MTP layers (m) and the model's mtp_depth is {}", mtp,
                                             params.model.mtp_depth));
  par.stage_layers = layout.layers;
}

// parallel: its layout string read, then every degree within its bounds.
void check_parallel(const ObjectReader& p, TrainingParams& params)
{
  read_pipeline_layout(p, params);
  p.require_non_negative("dp", params.parallel.dp);
  p.require_positive("tp", params.parallel.tp);
  p.require_positive("cp", params.parallel.cp);
  p.require_at_most("cp", params.parallel.cp, kMaxGpus);
  p.require_positive("pp", params.parallel.pp);
  p.require_positive("vpp", params.parallel.vpp);
  p.require_positive("ep", params.parallel.ep);
  p.require_at_most("dp", params.parallel.dp, kMaxGpus);
  p.require_at_most("tp", params.parallel.tp, kMaxGpus);
  p.require_at_most("pp", params.parallel.pp, kMaxGpus);
  p.require_at_most("vpp", params.parallel.vpp, kMaxGpus);
  p.require_at_most("ep", params.parallel.ep, kMaxGpus);
  p.require_non_negative("etp", params.parallel.etp);
  p.require_at_most("etp", params.parallel.etp, kMaxGpus);
  if (!p.describing() && (params.parallel.zero < 0 || params.parallel.zero > 3))
    p.fail_at("zero", "parallel.zero must be 0, 1, 2 or 3");
  p.require_positive("dp_replicate", params.parallel.dp_replicate);
  p.require_at_most("dp_replicate", params.parallel.dp_replicate, kMaxGpus);
}

} // namespace

void read_training(ObjectReader& r, TrainingParams& params)
{
  read_model(r.child("model", "the dense transformer"), params.model);
  ObjectReader b = r.child("batch", "batch sizes in samples");
  b.field("global", params.batch.global, "samples per iteration over all data-parallel replicas")
      .field("micro", params.batch.micro, "samples per microbatch");
  b.finish();
  b.require_positive("global", params.batch.global);
  b.require_positive("micro", params.batch.micro);
  b.require_at_most("global", params.batch.global, kMaxSamples);
  b.require_at_most("micro", params.batch.micro, params.batch.global);
  ObjectReader p = r.child("parallel", "how the model is split over GPUs");
  p.field("dp", params.parallel.dp, "data-parallel degree (0 = all GPUs / (tp x pp))")
      .field("tp", params.parallel.tp, "tensor-parallel degree")
      .field("cp", params.parallel.cp,
             "context-parallel degree: each sample's sequence split over cp GPUs, which exchange keys and values in "
             "every attention layer (context_parallel_size)")
      .choice("cp_comm", params.parallel.cp_comm,
              {{"p2p", CpComm::P2P}, {"a2a", CpComm::A2A}, {"allgather", CpComm::ALLGATHER}},
              "how context-parallel ranks exchange keys and values (cp_comm_type): p2p, ring attention with causal "
              "load balancing, sends overlapped with the attention blocks; a2a, DeepSpeed-Ulysses all-to-alls "
              "(heads split instead of the sequence); allgather, keys and values gathered whole before attention")
      .field("pp", params.parallel.pp, "pipeline-parallel degree")
      .field("vpp", params.parallel.vpp, "virtual pipeline chunks per GPU (interleaved schedule)")
      .field("ep", params.parallel.ep,
             "expert-parallel degree (MoE): each group of ep data-parallel replicas shares the experts, experts / ep "
             "per GPU (expert_model_parallel_size)")
      .field("etp", params.parallel.etp,
             "expert tensor-parallel degree, a divisor of tp (0 = tp; expert_tensor_parallel_size)")
      .field("sequence_parallel", params.parallel.sequence_parallel, "Megatron sequence parallelism")
      .field("zero", params.parallel.zero, "ZeRO stage 0-3")
      .field("dp_replicate", params.parallel.dp_replicate,
             "HSDP: replicas of the ZeRO-sharded state (torchtitan's data_parallel_replicate_degree, Megatron-Core's "
             "num_distributed_optimizer_instances); ZeRO shards over dp / dp_replicate replicas and the shards are "
             "all-reduced across the replicas (1 = shard over every replica)")
      .choice("partition", params.parallel.partition,
              {{"even", StagePartition::EVEN}, {"balanced", StagePartition::BALANCED}},
              "pipeline stages: even (layers divide equally) or balanced (the output layer's stage takes fewer "
              "layers so the slowest stage is as fast as it can be)")
      .choice("placement", params.parallel.placement,
              {{"tp-pp-dp", Placement::TP_PP_DP}, {"tp-dp-pp", Placement::TP_DP_PP}},
              "how ranks map to GPUs, innermost first: tp-pp-dp keeps a replica's pipeline stages together (data "
              "parallelism across nodes); tp-dp-pp keeps a stage's replicas together (pipeline across nodes)")
      .field("stage_layers", params.parallel.stage_layers,
             "layers of each virtual stage (pp x vpp entries, summing to the layers; 0 for a stage that holds only "
             "the embedding or the loss; under dualpipe, one copy's pp stages); overrides partition")
      .field(
          "pipeline_layout", params.parallel.pipeline_layout,
          "Megatron-Core's --pipeline-model-parallel-layout, e.g. \"Et*3|(tt|)*29,m|L\": virtual stages in model order "
          "split by |, E embedding, t decoder layer, m MTP layer, L loss, *N repeats, commas ignored; read into "
          "stage_layers (the MTP layers run with the loss)")
      .field("account_for_embedding", params.parallel.account_for_embedding,
             "the embedding takes a layer's slot in the even split: the first stage holds one layer fewer (Megatron "
             "--account-for-embedding-in-pipeline-split)")
      .field("account_for_loss", params.parallel.account_for_loss,
             "the output layer and loss take a layer's slot in the even split: the last stage holds one layer fewer "
             "(Megatron --account-for-loss-in-pipeline-split)");
  p.finish();
  check_parallel(p, params);
  read_framework(r, params.framework);
  r.field("iterations", params.iterations, "training iterations to simulate")
      .field("gradient_bucket", params.gradient_bucket, "gradient bucket size for data-parallel all-reduce")
      .field("memory_reserve", params.memory_reserve,
             "share of GPU memory kept for the CUDA context and the allocator's fragmentation (fits_in_memory and "
             "the planner's budget)")
      .field("tokens", params.tokens,
             "token budget to train: the report adds time_to_train_s (and plan-capacity uses it; 0 = none)");
  r.require_positive("iterations", params.iterations);
  r.require_at_most("iterations", params.iterations, kMaxIterations);
  r.require_positive("gradient_bucket", params.gradient_bucket.value);
  r.require(params.memory_reserve >= 0 && params.memory_reserve < 1, "memory_reserve",
            "memory_reserve must be in [0, 1)");
  r.require_non_negative("tokens", params.tokens);
  r.require_at_most("tokens", params.tokens, 1e16);
  read_checkpoint(r.child("checkpoint", "checkpoints of the long run (clustersim goodput; docs/goodput.md)"),
                  params.checkpoint);
}

} // namespace cs
