// Which data-parallel replicas a training run simulates, and what each simulated flow stands for (docs/scale.md).
#include "workloads/training/replica_fold.hpp"

#include "models/collectives/lowering.hpp"
#include "models/moe/moe_policy.hpp"
#include "models/moe/moe_routing.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cs {
namespace {

// Whether the analytical backend folds flows that run alike into the simulated ones (TaskGraph::flow_copies): on a
// fabric with an oversubscribed level and ideal routing, where the TP and CP ranks left out, and the replicas when
// folded, send over the same shared uplinks at the same time. ECMP hashes and background load treat copies
// differently. An MoE model's all-to-alls whose members are left out are closed forms that load the switches' links
// with their copies' pairs too (all_to_all_v_fabric_seconds).
bool folds_shared_links(const ClusterParams& cluster)
{
  const NetworkParams& net = cluster.network;
  return !uniform_fabric(net) && net.background.empty() && net.routing == FabricRouting::IDEAL;
}

// Whether the fabric lets replica 0 stand for the others: uniform (no replica's traffic slows another's
// differently), or oversubscribed with shared links the fold scales (the analytical backend).
bool fabric_alike(const ClusterParams& cluster, Backend backend)
{
  return uniform_fabric(cluster.network) || (backend == Backend::ANALYTICAL && folds_shared_links(cluster));
}

// Whether replica 0 can stand for every data-parallel replica: a fabric that allows it and no random slowdowns (drawn
// per device and step). Slow devices and the spread of speeds are folded into replica 0's stages
// (training_stragglers).
bool replicas_alike(const ClusterParams& cluster, Backend backend)
{
  return fabric_alike(cluster, backend) && cluster.stragglers.random.probability == 0;
}

// Whether replica 0 stands for an MoE model's replicas: each routes its own tokens to the others' experts, so they
// differ unless the routing is the same for every group and rank (balanced) and the policy treats ranks alike; the
// all-to-alls of the ranks left out are then their closed forms, and the other EP groups count as copies.
bool moe_replicas_alike(const TrainingPlan& plan)
{
  return plan.routing && plan.moe && plan.routing->same_for_every_group() && plan.moe->ranks_alike();
}

// Whether replica 0 stands for an MoE model's others although its ranks route differently (fold_to_slowest_rank): a
// policy that treats ranks alike (fixed placement, no state), a uniform fabric or one whose shared links the fold
// scales (the other replicas' flows and collectives as copies), the analytical backend (its all-to-alls are closed
// forms, so the ranks not built are counted, not simulated), no random slowdowns or recorded step times, and more
// than one replica. Slow GPUs and the spread of speeds fold: each stage runs at the slowest speed it has in any
// replica (training_stragglers).
bool skew_foldable(const TrainingPlan& plan, const RunEnv& env)
{
  const StragglerParams& st = env.cluster->stragglers;
  return plan.params->model.moe.enabled() && plan.routing && plan.moe && plan.moe->ranks_alike() &&
         !plan.routing->same_for_every_group() &&
         (uniform_fabric(env.cluster->network) || folds_shared_links(*env.cluster)) &&
         env.backend == Backend::ANALYTICAL && st.random.probability == 0 && st.step_times.empty() &&
         plan.parallel.dp > 1;
}

// The EP group whose routing loads its busiest rank most, summed over the MoE layers of the first microbatch (the
// experts fixed in order over the ranks, as static-ep places them): the group the step waits for, lowest on ties.
// One microbatch a layer: routing is drawn per step, and drawing every step twice (here and in the build) cost more
// than the fold saved on a 2,048-GPU DeepSeek-V3.
int slowest_group(const TrainingPlan& plan)
{
  const TrainingParams& p = *plan.params;
  const ModelParams& model = p.model;
  const ParallelLayout& l = plan.parallel;
  const int ep = l.ep, groups = l.dp / l.ep_replicas(), per_rank = model.moe.experts / ep;
  RoutingRequest q;
  q.ranks = ep;
  q.samples_per_rank = p.batch.micro;
  q.tokens_per_sample = model.seq / double(l.ep_fold()) / l.cp;
  q.experts = model.moe.experts;
  q.top_k = model.moe.top_k;
  q.seed = plan.seed;
  q.rank_totals = !plan.moe->reads_samples();
  q.rank_blocks = plan.moe->block_sums_only(model.moe.experts, ep, model.moe.capacity_factor);
  int best = 0;
  double worst = -1;
  for (int g = 0; g < groups; ++g) {
    q.group = g;
    double score = 0;
    for (q.layer = 0; q.layer < model.layers; ++q.layer) {
      if (!is_moe_layer(model.moe, q.layer))
        continue;
      const Routing r = plan.routing->route(q);
      std::vector<double> load(ep, 0.0);
      for (const auto& sample : r.tokens)
        for (int e = 0; e < model.moe.experts; ++e)
          load[e / per_rank] += sample[e];
      score += *std::max_element(load.begin(), load.end());
    }
    if (score > worst) {
      worst = score;
      best = g;
    }
  }
  return best;
}

// Whether a device runs two ops side by side (DualPipe's pairs, Megatron-Core's combined 1F1B): one op's experts then
// fill the wait for the other's all-to-all, and a rank slow in one op's layers may be quick in the other's.
bool pairs_ops(const TrainingPlan& plan)
{
  return plan.params->framework.overlap_moe_expert_parallel_comm || (plan.schedule && plan.schedule->overlaps_passes());
}

// Replica 0 alone, running the slowest group's routing and, each step, that group's slowest rank's expert work: a
// layer's combine holds every rank of its group until the slowest has sent, so where no device pairs ops the group's
// step is its slowest rank's, layer by layer (the zero-bubble weight passes, which no all-to-all closes, are each
// the slowest rank's too, which can only lengthen them).
void fold_to_slowest_rank(TrainingPlan& plan)
{
  plan.one_replica = true;
  plan.slowest_rank = true;
  plan.replicas_built = 0;
  plan.routing_group = slowest_group(plan);
}

// Where devices pair ops, the slowest of each op is not one rank's pair: EP group 0's replicas are built, running the
// slowest group's routing, and the other groups' all-to-alls are counted.
void fold_to_group(TrainingPlan& plan)
{
  plan.one_replica = plan.slowest_rank = false;
  plan.replicas_built = plan.parallel.ep_replicas();
  plan.routing_group = slowest_group(plan);
}

// Which of the two folds applies (false: neither).
bool fold_routing(TrainingPlan& plan)
{
  if (!pairs_ops(plan))
    fold_to_slowest_rank(plan);
  else if (plan.parallel.ep_replicas() < plan.parallel.dp)
    fold_to_group(plan);
  else
    return false;
  return true;
}

} // namespace

// `--replicas one` where replica 0 cannot stand for the others: refused (exit 2, nothing written) with the reason.
void check_replica_fold(const RunEnv& env, const TrainingPlan& plan)
{
  if (env.replicas != ReplicaMode::ONE || plan.parallel.dp < 2)
    return;
  const bool moe = plan.params->model.moe.enabled();
  if (!fabric_alike(*env.cluster, env.backend))
    throw env.error_at("cluster.network",
                       folds_shared_links(*env.cluster)
                           ? "--replicas one cannot hold on this network here: replicas behind an oversubscribed "
                             "level are folded with their share of its links on the analytical backend (use "
                             "--backend analytical, --replicas all, or auto)"
                           : "--replicas one cannot hold on this network: background traffic or ECMP routing loads "
                             "replicas differently (use --replicas all, or auto)");
  if (moe && !moe_replicas_alike(plan) && !skew_foldable(plan, env))
    throw env.error_at(plan.routing && plan.routing->same_for_every_group() ? "policies.moe" : "policies.moe_routing",
                       "--replicas one cannot hold for this MoE model: each replica routes its own tokens to the "
                       "others' experts; replica 0 stands for them only under balanced routing and static-ep, or "
                       "as its group's slowest rank under static-ep on the analytical backend without random "
                       "slowdowns (use --replicas all, or auto)");
  if (moe && !moe_replicas_alike(plan) && pairs_ops(plan) && plan.parallel.ep_replicas() >= plan.parallel.dp)
    throw env.error_at(plan.params->framework.overlap_moe_expert_parallel_comm
                           ? "workload.framework.overlap_moe_expert_parallel_comm"
                           : "policies.pipeline",
                       "--replicas one cannot hold here: devices run two ops side by side, so replica 0 cannot stand "
                       "for its group as its slowest rank, and the one EP group spans every replica (use --replicas "
                       "all, or auto)");
}

namespace {

// On a fabric the fold applies to, the flows each simulated transfer stands for: the other TP and CP ranks of its
// rank (host offsets 1 .. tp x cp - 1: they are innermost) and, with replica 0 alone, the other replicas; with one EP
// group's replicas built, the other groups (the same replica of each). A closed-form collective's copies may be any
// replica's: closed forms do not see one another, built or not.
void set_flow_copies(TrainingGraph& training, const TrainingPlan& plan, const RunEnv& env)
{
  if (env.backend != Backend::ANALYTICAL || !folds_shared_links(*env.cluster))
    return;
  const ParallelLayout& layout = plan.parallel;
  FlowCopies copies;
  for (int o = 1; o < layout.model_ranks(); ++o)
    copies.beside.push_back(o);
  const int step = plan.one_replica ? 1 : plan.replicas_built; // 0: every replica built, no copies
  for (int r = step; step > 0 && r < layout.dp; r += step)
    copies.replicas.push_back(layout.host(r, 0) - layout.host(0, 0));
  for (int r = 1; r < layout.dp; ++r)
    copies.collectives.push_back(layout.host(r, 0) - layout.host(0, 0));
  training.graph.set_flow_copies(std::move(copies));
}

// For the task limit's message: which fold would have made the graph smaller, or why none applies.
std::string fold_words(const TrainingPlan& plan, const RunEnv& env)
{
  const ClusterParams& cluster = *env.cluster;
  const bool moe = plan.params->model.moe.enabled();
  if (plan.one_replica || plan.replicas_built > 0 || plan.parallel.dp < 2)
    return "no replica fold is left to apply (one data-parallel replica is simulated)";
  if (moe && !moe_replicas_alike(plan) && skew_foldable(plan, env) && !pairs_ops(plan))
    return fmt::format("fold the {} data-parallel replicas into replica 0, running the slowest EP group's slowest "
                       "rank each step (--replicas one)",
                       plan.parallel.dp);
  if (moe && !moe_replicas_alike(plan) && skew_foldable(plan, env) && plan.parallel.ep_replicas() < plan.parallel.dp)
    return fmt::format("fold the {} data-parallel replicas into one EP group's {}, the slowest routing's (--replicas "
                       "one)",
                       plan.parallel.dp, plan.parallel.ep_replicas());
  if (moe && !moe_replicas_alike(plan))
    return "no replica fold applies (this MoE model's replicas route differently: only balanced routing under "
           "static-ep folds, or an EP group stands for the others under static-ep on the analytical backend)";
  if (!uniform_fabric(cluster.network) && !folds_shared_links(cluster))
    return "no replica fold applies (ECMP routing or background traffic loads replicas differently)";
  if (!uniform_fabric(cluster.network) && env.backend != Backend::ANALYTICAL)
    return "no replica fold applies here (replicas behind an oversubscribed level fold with their share of its links "
           "on the analytical backend)";
  if (!uniform_fabric(cluster.network))
    return fmt::format("fold the {} data-parallel replicas into replica 0, each flow with its copies' share of the "
                       "oversubscribed links (--replicas one)",
                       plan.parallel.dp);
  return fmt::format("fold the {} data-parallel replicas into replica 0 (--replicas one: the fabric is non-blocking, "
                     "so they run alike)",
                     plan.parallel.dp);
}

// The lowered training graph with every replica, or with replica 0 alone when asked, or (auto) when the analytical
// backend would otherwise run more than kAutoOneReplicaTasks tasks on a network that treats replicas alike, or on an
// oversubscribed fabric whose shared links the fold scales (MoE
// models whose replicas differ keep every replica and price their collectives by closed forms instead). The
// estimate is exact for the collectives (their expansions are counted while pricing them) and dp times replica 0's
// other tasks.
TrainingGraph build_replicas_unchecked(TrainingPlan& plan, const RunEnv& env, int dp)
{
  constexpr double kAutoOneReplicaTasks = 2e6;
  const PlatformSpec& platform = *env.platform;
  const bool moe = plan.params->model.moe.enabled(), foldable = !moe || moe_replicas_alike(plan);
  plan.one_replica = (env.replicas == ReplicaMode::ONE || env.replicas == ReplicaMode::ESTIMATE) && foldable;
  if (!foldable && dp > 1 && skew_foldable(plan, env) && env.replicas != ReplicaMode::ALL && fold_routing(plan)) {
    // Routing that differs by rank: replica 0 stands for every replica as its group's slowest rank, or (devices
    // pairing ops) the slowest group's replicas stand for the others. Asked for (one, the planner's estimate), or
    // under auto where every replica would pass the task count.
    TrainingGraph folded = build_training(plan);
    set_flow_copies(folded, plan, env);
    lower_training(folded, platform, CollectivePricing::FLOWS);
    const double stands_for = double(dp) / plan.replicas_to_build();
    if (env.replicas != ReplicaMode::AUTO || double(folded.graph.size()) * stands_for > kAutoOneReplicaTasks)
      return folded;
    plan.one_replica = plan.slowest_rank = false;
    plan.replicas_built = 0;
    plan.routing_group = 0;
  }
  if (env.replicas == ReplicaMode::AUTO && dp > 1 && env.backend == Backend::ANALYTICAL &&
      replicas_alike(*env.cluster, env.backend) && foldable) {
    plan.one_replica = true;
    TrainingGraph one = build_training(plan);
    set_flow_copies(one, plan, env);
    lower_training(one, platform, CollectivePricing::FLOWS);
    // Behind an oversubscribed level the fold is also the closer answer: its flows share links fairly, where the
    // full graph's colliding flows queue one after another and let replicas drift apart (docs/scale.md).
    if (double(one.graph.size()) * dp + one.closed_form_expansion_tasks > kAutoOneReplicaTasks ||
        !uniform_fabric(env.cluster->network))
      return one;
    plan.one_replica = false;
  }
  TrainingGraph training = build_training(plan);
  set_flow_copies(training, plan, env);
  if (moe && env.replicas == ReplicaMode::AUTO && env.backend == Backend::ANALYTICAL) {
    // MoE at scale: every replica is simulated, so the collectives' flows (a 1,024-rank ring per bucket) would dwarf
    // the rest; past the same task count, every collective is priced by its closed form instead. The graph is built
    // once: MoE policies keep state from step to step (FlexMoE's placement).
    // Counted first: the lowering not taken would be wasted (it was a fifth of a 1,024-GPU MoE run's wall time).
    if (closed_form_lowering_size(training.graph, platform) > kAutoOneReplicaTasks) {
      adopt_lowering(training, lower_collectives(training.graph, platform, CollectivePricing::CLOSED_FORM));
      return training;
    }
  }
  lower_training(training, platform, CollectivePricing::FLOWS);
  return training;
}

} // namespace

TrainingGraph build_replicas(TrainingPlan& plan, const RunEnv& env, int dp)
{
  try {
    TrainingGraph out = build_replicas_unchecked(plan, env, dp);
    if (plan.replicas_built > 0 || plan.slowest_rank)
      out.routing_group = plan.routing_group;
    out.slowest_rank = plan.slowest_rank;
    return out;
  } catch (const TaskLimitError& e) {
    throw TaskLimitError(e.limit(), fold_words(plan, env));
  }
}

} // namespace cs
