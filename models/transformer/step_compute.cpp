#include "models/transformer/step_compute.hpp"

#include "models/kernels/kernel.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"

#include <algorithm>
#include <stdexcept>

namespace cs {

double StepCompute::iteration_s(const std::vector<double>& stage_scale) const
{
  double sum = 0, slowest = 0, optimizer = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const double t = stages[s].micro_s * stage_scale[s];
    sum += t;
    slowest = std::max(slowest, t);
    optimizer = std::max(optimizer, stages[s].optimizer_s * stage_scale[s]);
  }
  return sum + (microbatches - 1) * slowest + optimizer;
}

StepCompute step_compute(const ModelParams& model, const FrameworkProfile& fw, const StepShape& p,
                         const KernelCostModel& cost)
{
  const int dp = p.parallel.dp, pp = p.parallel.pp;
  if (model.layers % pp != 0)
    throw std::invalid_argument("the model's layers do not divide into the pipeline stages");
  if (p.global_batch % (static_cast<long long>(dp) * p.micro_batch) != 0)
    throw std::invalid_argument("the global batch does not divide into replicas x microbatch");
  const LayerShape shape{p.micro_batch, ParallelLayout{}, fw};
  const PieceTimes layer =
      piece_times(layer_kernels(model, shape), cost, fw, 0, model.recompute, 1, model.recompute_modules);
  const PieceTimes head = piece_times(head_kernels(model, shape), cost, fw, 0, Recompute::NONE);
  const PieceTimes embedding = piece_times(embedding_kernels(model, shape), cost, fw, 0, Recompute::NONE);
  const double reduce_bytes = dtype_bytes(fw.reduce_dtype_for(model.dtype));
  StepCompute out;
  out.microbatches = p.global_batch / (dp * p.micro_batch);
  out.samples = static_cast<double>(p.global_batch) / dp;
  out.parameters = total_parameters(model);
  const int per_stage = model.layers / pp;
  for (int s = 0; s < pp; ++s) {
    StageStep st;
    st.micro_s = per_stage * (layer.forward + layer.backward);
    st.params = per_stage * layer_parameters(model);
    if (s == 0) {
      st.micro_s += embedding.forward + embedding.backward;
      st.params += embedding_parameters(model);
    }
    if (s == pp - 1) {
      st.micro_s += head.forward + head.backward;
      st.params += head_parameters(model);
    }
    st.optimizer_s = pass_cost(cost, {optimizer_kernel(st.params, fw, model)}, fw.kernel_gap_s).seconds;
    st.sync_bytes = st.params * reduce_bytes;
    out.stages.push_back(st);
  }
  return out;
}

} // namespace cs
