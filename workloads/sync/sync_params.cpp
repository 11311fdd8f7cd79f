#include "workloads/sync/sync_params.hpp"

namespace cs {

void read_sync_training(ObjectReader& r, SyncTrainingParams& p)
{
  read_model(r.child("model", "the transformer each replica trains"), p.model);
  ObjectReader b = r.child("batch", "batch sizes in samples");
  b.field("global", p.global_batch, "samples per step over all data-parallel replicas")
      .field("micro", p.micro_batch, "samples per microbatch");
  b.finish();
  b.require_positive("global", p.global_batch);
  b.require_positive("micro", p.micro_batch);
  b.require_at_most("global", p.global_batch, 1 << 24);
  b.require_at_most("micro", p.micro_batch, p.global_batch);
  ObjectReader par = r.child("parallel", "replicas and pipeline stages");
  par.field("dp", p.dp, "data-parallel replicas (0 = all GPUs / pp)").field("pp", p.pp, "pipeline stages (sdpipe)");
  par.finish();
  par.require_non_negative("dp", p.dp);
  par.require_positive("pp", p.pp);
  par.require_at_most("dp", p.dp, 1 << 20);
  par.require_at_most("pp", p.pp, 1024);
  read_framework(r, p.framework);
  r.field("steps", p.steps, "steps per replica on average: the run ends once dp x steps steps are done")
      .field("target_updates", p.target_updates,
             "report time_to_target_updates_s, when this many gradients have entered models (0 = none)")
      .field("servers", p.servers, "ps-*: parameter-server shards, one per node from node 0 (0 = one per node)");
  r.require_positive("steps", p.steps);
  r.require_at_most("steps", p.steps, 1'000'000);
  r.require_non_negative("target_updates", p.target_updates);
  r.require_at_most("target_updates", p.target_updates, 1e15);
  r.require_non_negative("servers", p.servers);
  r.require_at_most("servers", p.servers, 1 << 20);
}

} // namespace cs
