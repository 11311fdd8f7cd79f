#include "sim/plan/pipeline_bound.hpp"
#include "sim/plan/paired_pass_bound.hpp"
#include "sim/plan/zero3_bound.hpp"

#include "base/registry.hpp"
#include "models/collectives/all_to_all_v.hpp"
#include "models/moe/token_dispatcher.hpp"
#include "models/transformer/pass_cost.hpp"
#include "models/transformer/transformer.hpp"
#include "policies/pipeline/pipeline_schedule.hpp"
#include "policies/pipeline/schedule_timing.hpp"
#include "workloads/training/stage_costs.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>

namespace cs {

namespace {

// What both bounds price: the stages' passes (MoE layers with the planner's experts and the all-to-alls nothing
// hides) and each device's optimizer step over what it updates (ZeRO: its shard), as the builder prices it.
struct BoundPasses {
  std::vector<StageCost> stage;
  std::vector<double> optimizer;
};

BoundPasses bound_passes(const TrainingParams& params, const Plan& plan, const StageSet& set, const PieceTimes& experts,
                         const KernelCostModel& cost, double even_alltoall_s)
{
  // `experts` is zero where the planner leaves the routed experts out of the bound. Each MoE layer's dispatch and
  // combine, forward and backward, add where nothing hides them.
  PieceTimes moe = experts;
  const double alltoall = alltoall_exposed(params, plan) ? even_alltoall_s : 0.0;
  moe.forward += 2 * alltoall;
  moe.backward += 2 * alltoall;
  BoundPasses out;
  out.stage = with_routed_experts(set, moe);
  const FrameworkProfile& fw = params.framework;
  for (int d = 0; d < plan.parallel.pp; ++d) {
    const double weights = optimizer_parameters(set, d, plan.parallel, plan.parallel.zero >= 1 && plan.parallel.dp > 1);
    out.optimizer.push_back(pass_cost(cost, {optimizer_kernel(weights, fw, params.model)}, fw.kernel_gap_s).seconds);
  }
  return out;
}

int moe_layers(const StageSet& set, std::size_t vs)
{
  int n = 0;
  for (const Segment& seg : set.stages[vs].segments)
    n += seg.moe ? 1 : 0;
  return n;
}

// The (forward's stage, backward's stage) of device d's ops `first` and `second` run as one, when one is a forward and
// the other a whole backward (the pairs paired_idle_seconds lays out); none otherwise.
std::optional<std::pair<int, int>> forward_backward_pair(const PipelineOp& first, const PipelineOp& second,
                                                         const StageMap& map, int d)
{
  const PipelineOp* f = first.forward() ? &first : second.forward() ? &second : nullptr;
  const PipelineOp* b = first.pass == Pass::BACKWARD ? &first : second.pass == Pass::BACKWARD ? &second : nullptr;
  if (!f || !b)
    return std::nullopt;
  return std::make_pair(map.stage(d, f->chunk), map.stage(d, b->chunk));
}

std::unique_ptr<PipelineSchedule> schedule_of(const Plan& plan)
{
  // Without a pipeline, 1F1B's order: one device's passes add up the same in any order.
  return Registry<PipelineSchedule>::instance().create(plan.schedule.empty() ? "1f1b" : plan.schedule);
}

} // namespace

StageSet bound_stages(const TrainingParams& params, const Plan& plan, const KernelCostModel& cost,
                      const PlatformSpec& platform, const StagePieces* pieces)
{
  // The passes are priced without the data-parallel reductions and gathers beside them, which only slow them; the
  // stages' memory is not asked for.
  StageShape shape;
  shape.parallel = plan.parallel;
  shape.map = schedule_of(plan)->stage_map(plan.parallel.pp, plan.parallel.vpp);
  return pieces ? transformer_stages(params, platform, shape, *pieces)
                : transformer_stages(params, cost, platform, shape);
}

PassCounts pass_counts(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map)
{
  PassCounts out(order.size(), std::vector<std::array<int, 5>>(map.stages(), std::array<int, 5>{}));
  for (std::size_t d = 0; d < order.size(); ++d)
    for (const PipelineOp& op : order[d]) {
      auto& counts = out[d][map.stage(static_cast<int>(d), op.chunk)];
      ++counts[static_cast<int>(op.pass)];
      counts[4] += op.overlap == Overlap::NONE && op.pass != Pass::BACKWARD_WEIGHT ? 1 : 0;
    }
  return out;
}

double unpaired_alltoall_seconds(const TrainingParams& params, const Plan& plan, double even_alltoall_s)
{
  // Under a schedule that pairs passes, an op left unpaired (the warm-up and cool-down) has no other pass to hide its
  // dispatch and combine behind: they add as in a schedule that pairs nothing, unless the framework hides them (and
  // a schedule that pairs nothing has them in its passes already).
  const FrameworkProfile& fw = params.framework;
  if (!params.model.moe.enabled() || plan.parallel.ep < 2 || fw.overlap_moe_expert_parallel_comm ||
      fw.moe_shared_expert_overlap || alltoall_exposed(params, plan))
    return 0.0;
  return 2 * even_alltoall_s;
}

PairCounts pair_counts(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map)
{
  PairCounts out(order.size());
  for (std::size_t d = 0; d < order.size(); ++d)
    for (std::size_t i = 0; i + 1 < order[d].size(); ++i)
      if (order[d][i].overlap == Overlap::WITH_NEXT)
        if (const auto stages = forward_backward_pair(order[d][i], order[d][i + 1], map, static_cast<int>(d)))
          ++out[d][*stages];
  return out;
}

bool pairs_wait(const TrainingParams& params, const Plan& plan, bool whole_alltoalls, double even_alltoall_s)
{
  return whole_alltoalls && even_alltoall_s > 0 && !params.framework.delay_wgrad_compute &&
         !params.model.recomputes("moe") && plan.parallel.cp == 1;
}

std::optional<ChainShape> chain_shape(const std::vector<std::vector<PipelineOp>>& order, const StageMap& map)
{
  const int devices = static_cast<int>(order.size());
  if (map.chains() != 1 || map.devices() != devices)
    return std::nullopt;
  ChainShape out;
  int microbatch = -1; // of every device's last gradient pass
  for (int d = 0; d < devices; ++d) {
    const auto& ops = order[d];
    if (map.stage(d, 0) != d || ops.empty() || !ops.front().forward() || ops.front().microbatch != 0 ||
        ops.front().chunk != 0)
      return std::nullopt;
    std::size_t last = ops.size();
    std::vector<int> trailing;
    for (; last > 0 && ops[last - 1].pass == Pass::BACKWARD_WEIGHT; --last)
      trailing.push_back(map.stage(d, ops[last - 1].chunk));
    if (last == 0)
      return std::nullopt;
    const PipelineOp& gradient = ops[last - 1];
    if (!gradient.sends_gradient() || gradient.chunk != 0 || (microbatch >= 0 && gradient.microbatch != microbatch))
      return std::nullopt;
    microbatch = gradient.microbatch;
    out.trailing_weight_stages.push_back(std::move(trailing));
  }
  return out;
}

double pipeline_work_bound(const TrainingParams& params, const Plan& plan, const StageSet& set,
                           const PieceTimes& experts, const KernelCostModel& cost, const PassCounts& counts,
                           double even_alltoall_s, const std::vector<double>& pair_idle, const ChainBound* chain)
{
  // The device whose iteration ends last starts the next one then and runs every op of it, one after another: the
  // measured iteration is no shorter than its work, and so no shorter than the least any device does.
  const BoundPasses passes = bound_passes(params, plan, set, experts, cost, even_alltoall_s);
  double least = std::numeric_limits<double>::infinity();
  const double unpaired = unpaired_alltoall_seconds(params, plan, even_alltoall_s);
  std::vector<double> work(counts.size());
  for (std::size_t d = 0; d < counts.size(); ++d) {
    work[d] = d < pair_idle.size() ? pair_idle[d] : 0.0; // paired ops' idle, if given
    for (std::size_t vs = 0; vs < counts[d].size(); ++vs) {
      for (int pass = 0; pass < 4; ++pass)
        work[d] += counts[d][vs][pass] * passes.stage[vs].seconds(pass);
      work[d] += counts[d][vs][4] * moe_layers(set, vs) * unpaired;
    }
    least = std::min(least, work[d] + passes.optimizer[d]);
  }
  if (!chain)
    return least;
  // Device d's tail is its optimizer step and its gathers, as the timeline adds them; its trailing weight passes last
  // exactly what the timeline gives them (nothing slows a weight pass or adds a pair's idle to it). Stage d is device
  // d's first chunk.
  auto tail = [&](std::size_t d) {
    return passes.optimizer[d] + (d < chain->gathers.size() ? chain->gathers[d] : 0.0);
  };
  auto after = [&](std::size_t d) {
    double weight = 0;
    for (int vs : chain->shape.trailing_weight_stages[d])
      weight += passes.stage[vs].seconds(3);
    return weight + tail(d);
  };
  double fill = 0, most = 0, late = 0; // late: how much later than the first device's any device's last op ends
  for (std::size_t d = 0; d < work.size(); ++d) {
    most = std::max(most, fill + work[d] + tail(d));
    late = std::max(late, after(d) - after(0));
    fill += passes.stage[d].seconds(0); // microbatch 0's forward on this stage, before the next stage's first op
  }
  return std::max(least, most - late);
}

double pipeline_compute_bound(const TrainingParams& params, const Plan& plan, const PieceTimes& experts,
                              const KernelCostModel& cost, const PlatformSpec& platform, int microbatches,
                              bool whole_alltoalls)
{
  return pipeline_compute_bound(params, plan, bound_stages(params, plan, cost, platform), experts, cost, platform,
                                microbatches, even_alltoall_seconds(params, plan, platform), whole_alltoalls);
}

double pipeline_compute_bound(const TrainingParams& params, const Plan& plan, const StageSet& set,
                              const PieceTimes& experts, const KernelCostModel& cost, const PlatformSpec& platform,
                              int microbatches, double even_alltoall_s, bool whole_alltoalls,
                              const std::vector<std::vector<PipelineOp>>* given_order)
{
  const int pp = plan.parallel.pp, v = plan.parallel.vpp;
  const BoundPasses passes = bound_passes(params, plan, set, experts, cost, even_alltoall_s);
  const std::vector<StageCost>& stage = passes.stage;
  const auto own_order =
      given_order ? std::vector<std::vector<PipelineOp>>{} : schedule_of(plan)->order(pp, v, microbatches);
  const auto& order = given_order ? *given_order : own_order;
  const FrameworkProfile& fw = params.framework;
  // An op paired with a neighbour (DualPipe's overlapped chunks) runs its experts beside the other's all-to-all, which
  // takes the dispatcher's SM share: with share f for c seconds of t, no less than t + min(t f / (1 - f), c f).
  std::vector<int> moe_count(set.stages.size(), 0);
  for (std::size_t vs = 0; vs < set.stages.size(); ++vs)
    moe_count[vs] = moe_layers(set, vs);
  const double a = even_alltoall_s;
  const ModelParams& model = params.model;
  const double f = model.moe.enabled() && platform.device
                       ? token_dispatcher(model.moe.dispatcher)
                             .sm_share(fw.comm_sm_fraction, model.moe.dispatcher_sms(), platform.device->sms)
                       : 0.0;
  auto slowdown = [&](double t) { return f <= 0 || f >= 1 || t <= 0 ? 0.0 : std::min(t * f / (1 - f), a * f); };
  auto op_experts = [&](const PipelineOp& op) { // the experts an op runs beside its partner's all-to-all
    return op.pass == Pass::FORWARD          ? experts.forward
           : op.pass == Pass::BACKWARD       ? experts.backward
           : op.pass == Pass::BACKWARD_INPUT ? experts.backward - experts.weight
                                             : 0.0;
  };
  const double unpaired = unpaired_alltoall_seconds(params, plan, even_alltoall_s);
  // A pair's idle beside its all-to-alls (paired_idle_seconds), added to its second op, by (forward's stage,
  // backward's stage): where the policy sends each all-to-all whole and nothing else splits a pass's tasks.
  const bool paired_waits = pairs_wait(params, plan, whole_alltoalls, a);
  std::map<std::pair<int, int>, double> pair_idle;
  std::vector<std::vector<double>> seconds(order.size());
  for (std::size_t d = 0; d < order.size(); ++d)
    for (std::size_t i = 0; i < order[d].size(); ++i) {
      const PipelineOp& op = order[d][i];
      const int vs = set.map.stage(static_cast<int>(d), op.chunk);
      double per_layer = 0, idle = 0;
      if (op.overlap == Overlap::NONE) {
        per_layer = op.pass == Pass::BACKWARD_WEIGHT ? 0.0 : unpaired;
      } else {
        per_layer = slowdown(op_experts(op));
        const auto stages = paired_waits && op.overlap == Overlap::WITH_PREVIOUS
                                ? forward_backward_pair(order[d][i - 1], op, set.map, static_cast<int>(d))
                                : std::nullopt;
        if (stages) {
          auto found = pair_idle.find(*stages);
          if (found == pair_idle.end())
            found = pair_idle
                        .emplace(*stages, paired_idle_seconds(set.stages[stages->first], set.stages[stages->second],
                                                              experts.forward + slowdown(experts.forward),
                                                              experts.backward + slowdown(experts.backward), a))
                        .first;
          idle = found->second;
        }
      }
      seconds[d].push_back(stage[vs].seconds(static_cast<int>(op.pass)) + moe_count[vs] * per_layer + idle);
    }
  // Two iterations, as the planner's runs measure the second: a device starts the next one after its own optimizer
  // step, so one device's drain overlaps another's fill and the period is shorter than one iteration from idle.
  // After its optimizer step a device waits for ZeRO-1/2's gathers of its updated shards before its next iteration.
  std::vector<double> tail = passes.optimizer;
  const std::vector<double> gathers = zero12_gather_seconds(params, plan, set, platform);
  for (std::size_t d = 0; d < gathers.size() && d < tail.size(); ++d)
    tail[d] += gathers[d];
  const auto ends = schedule_iteration_ends(order, set.map, seconds, tail, 2);
  return ends[1] - ends[0];
}

bool alltoall_exposed(const TrainingParams& params, const Plan& plan)
{
  const ModelParams& model = params.model;
  const FrameworkProfile& fw = params.framework;
  if (!model.moe.enabled() || plan.parallel.ep < 2 || fw.overlap_moe_expert_parallel_comm ||
      fw.moe_shared_expert_overlap)
    return false;
  return plan.schedule.empty() || !Registry<PipelineSchedule>::instance().create(plan.schedule)->overlaps_passes();
}

double exposed_alltoall_seconds(const TrainingParams& params, const Plan& plan, const PlatformSpec& platform)
{
  return alltoall_exposed(params, plan) ? even_alltoall_seconds(params, plan, platform) : 0.0;
}

double even_alltoall_seconds(const TrainingParams& params, const Plan& plan, const PlatformSpec& platform)
{
  const ModelParams& model = params.model;
  const ParallelLayout& p = plan.parallel;
  if (!model.moe.enabled() || p.ep < 2)
    return 0;
  // As the MoE emitter routes: each EP rank its 1/fold of the sequence on its CP rank, every token top_k times,
  // 1/etp of its hidden vector a TP rank; the share bound for the rank's own experts stays home.
  const int ep = p.ep;
  const double tokens = double(plan.micro) * model.seq / p.ep_fold() / p.cp;
  const double token_bytes = model.hidden * dtype_bytes(model.dtype) / p.expert_tp();
  const double per_pair = tokens * model.moe.top_k / ep * token_bytes;
  std::vector<double> routed(static_cast<std::size_t>(ep) * ep, per_pair);
  for (int i = 0; i < ep; ++i)
    routed[static_cast<std::size_t>(i) * ep + i] = 0;
  const auto hosts = p.ep_group(0, 0);
  const auto machines = machines_of(platform, hosts);
  const DispatchGroup group{ep, machines, model.moe.experts, model.moe.top_k, model.moe.max_nodes_per_token};
  const auto bytes = token_dispatcher(model.moe.dispatcher).traffic(routed, group);
  return all_to_all_v_seconds(bytes, group_shape(platform, hosts), all_to_all_v_protocol(), machines);
}

} // namespace cs
