#include "workloads/training/beside_communication.hpp"

#include "models/transformer/transformer.hpp"

#include <algorithm>

namespace cs {

double beside_communication(double t, double c, double f) { return f > 0 ? std::min(t / (1 - f), t + c * f) : t; }

void slow_beside_zero3(PieceTimes& layer, const ModelParams& model, int tp, const FrameworkProfile& fw,
                       const GroupShape& g)
{
  const double e = dtype_bytes(model.dtype), r = dtype_bytes(fw.reduce_dtype_for(model.dtype));
  auto comm = [&](double params, bool backward) {
    return choose_collective("all-gather", "auto", params * e, g).seconds +
           (backward ? choose_collective("reduce-scatter", "auto", params * r, g).seconds : 0.0);
  };
  const double f = fw.comm_sm_fraction, lp = layer_parameters(model) / tp;
  layer.forward = beside_communication(layer.forward, comm(lp, false), f);
  layer.backward = beside_communication(layer.backward, comm(lp, true), f);
}

void slow_beside_reduction(std::vector<StageCost>& stages, const TrainingParams& params, int zero, const GroupShape& g)
{
  const FrameworkProfile& fw = params.framework;
  const double r = dtype_bytes(fw.reduce_dtype_for(params.model.dtype));
  const char* kind = zero >= 1 ? "reduce-scatter" : "all-reduce";
  for (auto& stage : stages)
    for (std::size_t i = 1; i < stage.segments.size(); ++i) {
      Segment& next = stage.segments[i - 1];
      const double c = choose_collective(kind, "auto", stage.segments[i].params * r, g).seconds;
      next.beside_reduce_s = beside_communication(next.backward_s, c, fw.comm_sm_fraction) - next.backward_s;
    }
}

} // namespace cs
