#include "workloads/training/beside_communication.hpp"

#include "models/transformer/transformer.hpp"

#include <algorithm>

namespace cs {

double beside_communication(double t, double c, double f) { return f > 0 ? std::min(t / (1 - f), t + c * f) : t; }

double ZeroGroups::reduce_seconds(double bytes, bool sharded) const
{
  const double inside = choose_collective(sharded ? "reduce-scatter" : "all-reduce", "auto", bytes, shard).seconds;
  return inside + (sharded && across ? choose_collective("all-reduce", "auto", bytes / members, *across).seconds : 0.0);
}

ZeroGroups zero_groups(const ParallelLayout& parallel, const PlatformSpec& platform)
{
  ZeroGroups g{group_shape(platform, parallel.shard_group(0)), std::nullopt, parallel.shard_dp() * parallel.cp};
  if (parallel.dp_replicate > 1) {
    std::vector<int> places; // replica 0's place in every shard group
    for (int k = 0; k < parallel.dp_replicate; ++k)
      places.push_back(parallel.host(RankCoords{k * parallel.shard_dp(), 0, 0, 0}));
    g.across = group_shape(platform, places);
  }
  return g;
}

void slow_beside_zero3(PieceTimes& layer, const ModelParams& model, int tp, const FrameworkProfile& fw,
                       const ZeroGroups& g)
{
  const double e = dtype_bytes(model.dtype), r = dtype_bytes(fw.reduce_dtype_for(model.dtype));
  auto comm = [&](double params, bool backward) {
    return choose_collective("all-gather", "auto", params * e, g.shard).seconds +
           (backward ? g.reduce_seconds(params * r, true) : 0.0);
  };
  const double f = fw.comm_sm_fraction, lp = layer_parameters(model) / tp;
  layer.forward = beside_communication(layer.forward, comm(lp, false), f);
  layer.backward = beside_communication(layer.backward, comm(lp, true), f);
}

void slow_beside_reduction(std::vector<StageCost>& stages, const TrainingParams& params, int zero, const ZeroGroups& g)
{
  const FrameworkProfile& fw = params.framework;
  const double r = dtype_bytes(fw.reduce_dtype_for(params.model.dtype));
  for (auto& stage : stages)
    for (std::size_t i = 1; i < stage.segments.size(); ++i) {
      Segment& next = stage.segments[i - 1];
      const double c = g.reduce_seconds(stage.segments[i].params * r, zero >= 1);
      next.beside_reduce_s = beside_communication(next.backward_s, c, fw.comm_sm_fraction) - next.backward_s;
    }
}

} // namespace cs
