// Which data-parallel replicas a training run simulates, and what each simulated flow stands for (docs/scale.md).
#include "workloads/training/replica_fold.hpp"

#include "models/collectives/lowering.hpp"
#include "models/moe/moe_policy.hpp"

#include <fmt/format.h>

namespace cs {
namespace {

// Whether the analytical backend folds flows that run alike into the simulated ones (TaskGraph::flow_copies): on a
// fabric with an oversubscribed level and ideal routing, where the TP and CP ranks left out, and the replicas when
// folded, send over the same shared uplinks at the same time. ECMP hashes and background load treat copies
// differently; MoE models fold their TP ranks into the all-to-alls' closed forms instead.
bool folds_shared_links(const ClusterParams& cluster)
{
  const NetworkParams& net = cluster.network;
  return !uniform_fabric(net) && net.background.empty() && net.routing == FabricRouting::IDEAL;
}

// Whether replica 0 can stand for every data-parallel replica: a uniform fabric (no replica's traffic slows another's
// differently), or an oversubscribed one whose shared links the fold scales on the analytical backend, and no random
// slowdowns (drawn per device and step). Slow devices and the spread of speeds are folded into replica 0's stages
// (training_stragglers).
bool replicas_alike(const ClusterParams& cluster, Backend backend, bool moe)
{
  const bool fabric =
      uniform_fabric(cluster.network) || (backend == Backend::ANALYTICAL && !moe && folds_shared_links(cluster));
  return fabric && cluster.stragglers.random.probability == 0;
}

// Whether replica 0 stands for an MoE model's replicas: each routes its own tokens to the others' experts, so they
// differ unless the routing is the same for every group and rank (balanced) and the policy treats ranks alike; the
// all-to-alls of the ranks left out are then their closed forms, and the other EP groups count as copies.
bool moe_replicas_alike(const TrainingPlan& plan)
{
  return plan.routing && plan.moe && plan.routing->same_for_every_group() && plan.moe->ranks_alike();
}

// `--replicas one` where replica 0 cannot stand for the others: refused (exit 2, nothing written) with the reason.
} // namespace

void check_replica_fold(const RunEnv& env, const TrainingPlan& plan)
{
  if (env.replicas != ReplicaMode::ONE || plan.parallel.dp < 2)
    return;
  const bool moe = plan.params->model.moe.enabled();
  if (!uniform_fabric(env.cluster->network) &&
      !(env.backend == Backend::ANALYTICAL && !moe && folds_shared_links(*env.cluster)))
    throw env.error_at("cluster.network",
                       folds_shared_links(*env.cluster)
                           ? "--replicas one cannot hold on this network here: replicas behind an oversubscribed "
                             "level are folded with their share of its links on the analytical backend, for dense "
                             "models (use --backend analytical, --replicas all, or auto)"
                           : "--replicas one cannot hold on this network: background traffic or ECMP routing loads "
                             "replicas differently (use --replicas all, or auto)");
  if (moe && !moe_replicas_alike(plan))
    throw env.error_at(plan.routing && plan.routing->same_for_every_group() ? "policies.moe" : "policies.moe_routing",
                       "--replicas one cannot hold for this MoE model: each replica routes its own tokens to the "
                       "others' experts, alike only under balanced routing and static-ep (use --replicas all, or "
                       "auto)");
}

namespace {

// On a fabric the fold applies to, the flows each simulated transfer stands for: the other TP and CP ranks of its
// rank (host offsets 1 .. tp x cp - 1: they are innermost) and, with replica 0 alone, the other replicas.
void set_flow_copies(TrainingGraph& training, const TrainingPlan& plan, const RunEnv& env)
{
  if (env.backend != Backend::ANALYTICAL || plan.params->model.moe.enabled() || !folds_shared_links(*env.cluster))
    return;
  const ParallelLayout& layout = plan.parallel;
  FlowCopies copies;
  for (int o = 1; o < layout.model_ranks(); ++o)
    copies.beside.push_back(o);
  if (plan.one_replica)
    for (int r = 1; r < layout.dp; ++r)
      copies.replicas.push_back(layout.host(r, 0) - layout.host(0, 0));
  training.graph.set_flow_copies(std::move(copies));
}

// For the task limit's message: which fold would have made the graph smaller, or why none applies.
std::string fold_words(const TrainingPlan& plan, const RunEnv& env)
{
  const ClusterParams& cluster = *env.cluster;
  const bool moe = plan.params->model.moe.enabled();
  if (plan.one_replica || plan.parallel.dp < 2)
    return "no replica fold is left to apply (one data-parallel replica is simulated)";
  if (moe && !moe_replicas_alike(plan))
    return "no replica fold applies (this MoE model's replicas route differently: only balanced routing under "
           "static-ep folds)";
  if (!uniform_fabric(cluster.network) && !folds_shared_links(cluster))
    return "no replica fold applies (ECMP routing or background traffic loads replicas differently)";
  if (!uniform_fabric(cluster.network) && (moe || env.backend != Backend::ANALYTICAL))
    return "no replica fold applies here (replicas behind an oversubscribed level fold with their share of its links "
           "on the analytical backend, for dense models)";
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
  if (env.replicas == ReplicaMode::AUTO && dp > 1 && env.backend == Backend::ANALYTICAL &&
      replicas_alike(*env.cluster, env.backend, moe) && foldable) {
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
    return build_replicas_unchecked(plan, env, dp);
  } catch (const TaskLimitError& e) {
    throw TaskLimitError(e.limit(), fold_words(plan, env));
  }
}

} // namespace cs
