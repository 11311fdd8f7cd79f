#include "workloads/training/training_builder.hpp"

#include "workloads/training/pipeline_graph.hpp"
#include "workloads/training/training_comm.hpp"
#include "workloads/training/training_extension.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace cs {

namespace {

// The schedule's order for this plan's stages (a chain, or the stage DAG of a graph pipeline).
std::vector<std::vector<PipelineOp>> schedule_order(const TrainingPlan& plan, int microbatches)
{
  const auto& costs = plan.stages->stages;
  const auto dag = stage_dag(costs);
  const StageMap& map = plan.stages->map;
  auto order = dag.empty() ? plan.schedule->order(map.devices(), map.chunks(), microbatches)
                           : plan.schedule->order_dag(dag, microbatches);
  if (plan.params->framework.overlap_moe_expert_parallel_comm)
    pair_backward_with_next_forward(order);
  return order;
}

class Builder {
public:
  explicit Builder(const TrainingPlan& plan) : plan_(plan), w_(*plan.params), comm_(out_.graph) {}

  TrainingGraph build()
  {
    const ParallelLayout& parallel = plan_.parallel;
    const int pp = parallel.pp, dp = parallel.dp;
    if (w_.batch.global % (dp * w_.batch.micro) != 0)
      throw std::invalid_argument("global batch does not divide into data-parallel ranks x micro batch");
    const auto& costs = plan_.stages->stages;
    const StageMap& map = plan_.stages->map;
    if (costs.empty() || static_cast<int>(costs.size()) != map.stages() || map.devices() != pp)
      throw std::invalid_argument("the stages do not divide into the pipeline's devices");
    out_.ranks = static_cast<int>(parallel.ranks());
    out_.pipeline_stages = pp;
    out_.tensor_parallel = parallel.tp;
    out_.chunks = map.chunks();
    out_.microbatches = w_.batch.global / (dp * w_.batch.micro);
    out_.parameters = plan_.stages->parameters;
    out_.model_flops_per_iteration = plan_.stages->model_flops_per_iteration;
    out_.hardware_flops_per_iteration = plan_.stages->hardware_flops_per_iteration;
    out_.samples_per_iteration = w_.batch.global;
    out_.tokens_per_iteration = double(w_.batch.global) * w_.model.seq;
    order_ = schedule_order(plan_, out_.microbatches);
    out_.in_flight_per_device = peak_in_flight(order_);
    out_.order = order_;
    out_.layers_per_device.assign(pp, 0);
    for (std::size_t vs = 0; vs < costs.size(); ++vs)
      out_.layers_per_device[map.device_of(static_cast<int>(vs))] += plan_.stages->layers_per_stage.at(vs);
    // Each copy of the model (DualPipe's two) sees its share of the microbatches.
    const double layer_passes = double(out_.microbatches) / map.chains() *
                                *std::max_element(out_.layers_per_device.begin(), out_.layers_per_device.end());
    out_.tp_seconds_per_iteration = layer_passes * plan_.stages->tp_seconds_per_layer;
    out_.cp_seconds_per_iteration = layer_passes * plan_.stages->cp_seconds_per_layer;
    out_.context_parallel = parallel.cp;
    double layers = 0;
    for (int l : plan_.stages->layers_per_stage)
      layers += l;
    // Every replica's stage has cp TP groups and tp CP groups.
    const double layer_microbatches = double(dp) * out_.microbatches / map.chains() * layers;
    out_.tp_bytes_per_iteration = layer_microbatches * parallel.cp * plan_.stages->tp_bytes_per_layer;
    out_.cp_intra_bytes_per_iteration = layer_microbatches * parallel.tp * plan_.stages->cp_intra_bytes_per_layer;
    out_.cp_inter_bytes_per_iteration = layer_microbatches * parallel.tp * plan_.stages->cp_inter_bytes_per_layer;
    const int built = plan_.replicas_to_build();
    out_.replicas_built = built;
    for (int h = 0; h < built * pp; ++h)
      out_.compute_streams.push_back(out_.graph.add_stream(host(h / pp, h % pp), "compute"));
    extensions_ = make_training_extensions(plan_, out_.graph);
    CommEmitter comm(out_, plan_, comm_, order_);
    std::vector<int> ends(built * pp, -1); // per simulated device: what its next iteration waits for
    for (int it = 0; it < w_.iterations; ++it) {
      std::vector<PipelineTasks> replicas;
      for (int r = 0; r < built; ++r)
        replicas.push_back(replica(it, r, ends, comm));
      ends = comm.iteration(it, replicas, ends);
    }
    for (const auto& extension : extensions_)
      extension->finish(out_);
    return std::move(out_);
  }

private:
  int host(int replica, int device) const { return plan_.parallel.host(replica, device); }

  PipelineTasks replica(int it, int r, const std::vector<int>& ends, const CommEmitter& comm)
  {
    const int pp = plan_.parallel.pp;
    PipelineInput in;
    in.schedule = plan_.schedule;
    in.map = plan_.stages->map;
    in.microbatches = out_.microbatches;
    in.costs = &plan_.stages->stages;
    for (int d = 0; d < pp; ++d) {
      in.hosts.push_back(host(r, d));
      in.compute_streams.push_back(out_.compute_streams[r * pp + d]);
      in.ready.push_back(ends[r * pp + d]);
    }
    in.labels = TaskLabels{it, -1, -1, -1, 0};
    in.in_pieces = [&comm](int d, std::size_t i) { return comm.in_pieces(d, i); };
    in.blocking_sends = w_.framework.p2p_blocking;
    in.sends_wait_same_pass = w_.framework.overlap_p2p_comm && plan_.parallel.vpp > 1;
    in.order = &order_;
    for (const auto& extension : extensions_)
      in.extensions.push_back(extension.get());
    in.replica = r;
    return append_pipeline(out_.graph, comm_, in);
  }

  const TrainingPlan& plan_;
  const TrainingParams& w_;
  TrainingGraph out_;
  StreamPool comm_; // data-parallel communication streams ("comm", "comm1", ...) and p2p channels
  std::vector<std::vector<PipelineOp>> order_;
  std::vector<std::unique_ptr<TrainingExtension>> extensions_; // what the plan's layers add besides their passes
};

} // namespace

TrainingGraph build_training(const TrainingPlan& plan) { return Builder(plan).build(); }

void lower_training(TrainingGraph& t, const PlatformSpec& platform, CollectivePricing pricing)
{
  adopt_lowering(t, lower_collectives(t.graph, platform, pricing));
}

void adopt_lowering(TrainingGraph& t, LoweredGraph lowered)
{
  for (auto& iteration : t.optimizer_tasks)
    for (int& task : iteration)
      task = lowered.task_map.at(task);
  t.graph = std::move(lowered.graph);
  t.closed_form_intra_bytes = lowered.closed_form_intra_bytes;
  t.closed_form_inter_bytes = lowered.closed_form_inter_bytes;
  t.closed_form_link_bytes = std::move(lowered.closed_form_link_bytes);
  t.closed_form_expansion_tasks = lowered.closed_form_expansion_tasks;
}

} // namespace cs
