#include "sim/plan/plan_scenario.hpp"

#include "base/yaml_reader.hpp"
#include "models/transformer/fp8_recipe.hpp"
#include "sim/plan/planner.hpp"
#include "workloads/training/training_workload.hpp"

#include <algorithm>
#include <yaml-cpp/yaml.h>

namespace cs {

TrainingParams& own_training(Scenario& s)
{
  auto w = std::make_shared<TrainingWorkload>(workload_as<TrainingWorkload>(s));
  s.workload = w;
  return w->params;
}

namespace {

const TrainingParams& training_of(const Scenario& s) { return workload_as<TrainingWorkload>(s).params; }

} // namespace

Scenario plan_scenario(const Scenario& base, int gpus, const Plan& plan)
{
  Scenario s = base;
  const int per_node = base.cluster.gpus_per_node;
  s.cluster.nodes = gpus >= per_node ? gpus / per_node : 1;
  s.cluster.gpus_per_node = gpus >= per_node ? per_node : gpus;
  if (s.cluster.network.nics_per_node > s.cluster.gpus_per_node)
    s.cluster.network.nics_per_node = s.cluster.gpus_per_node;
  TrainingParams& params = own_training(s);
  auto& p = params.parallel;
  p.assign(plan.parallel);
  p.stage_layers = plan.stage_layers;
  p.pipeline_layout.clear(); // the scenario's own layout is its own pipeline's
  // Uneven stages are fine; stage_layers, when set, decides. A scenario whose embedding and loss take a pipeline slot
  // each (Megatron's --account-for-*-in-pipeline-split) keeps them in the even split of the plans without a partition
  // of their own; a partition the planner chose weighs the embedding and the loss already.
  const bool slots = p.account_for_embedding || p.account_for_loss;
  if (!plan.stage_layers.empty())
    p.account_for_embedding = p.account_for_loss = false;
  p.partition =
      plan.parallel.pp > 1 && !(slots && plan.stage_layers.empty()) ? StagePartition::BALANCED : StagePartition::EVEN;
  params.batch.micro = plan.micro;
  params.model.recompute = plan.recompute;
  params.model.recompute_modules = plan.recompute_modules;
  if (plan.fp8 == "none")
    params.model.fp8 = nullptr;
  else if (!params.model.fp8 || params.model.fp8->name() != plan.fp8) // the scenario's own keeps its settings
    params.model.fp8 = make_fp8_recipe(plan.fp8);
  if (!plan.dispatcher.empty())
    params.model.moe.dispatcher = plan.dispatcher;
  // Node-limited routing (DeepSeek-V3's 4 nodes a token) limits nothing where a plan's EP group spans fewer nodes:
  // a token reaches only its group's nodes, all of them.
  if (int& limit = params.model.moe.max_nodes_per_token; limit > 0)
    limit = std::min(limit, p.layout(static_cast<long long>(s.cluster.nodes) * s.cluster.gpus_per_node)
                                .ep_group_machines(s.cluster.gpus_per_node));
  s.policies.set("pipeline", plan.schedule);
  return s;
}

std::string plan_scenario_yaml(const Scenario& base, int gpus, const Plan& plan)
{
  const Scenario s = plan_scenario(base, gpus, plan);
  YAML::Node doc = YAML::Clone(base.source.resolved());
  strip_override_tags(doc);
  doc["cluster"]["nodes"] = s.cluster.nodes;
  doc["cluster"]["gpus_per_node"] = s.cluster.gpus_per_node;
  if (s.cluster.network.nics_per_node != base.cluster.network.nics_per_node)
    doc["cluster"]["network"]["nics_per_node"] = s.cluster.network.nics_per_node;
  const auto& p = training_of(s).parallel;
  YAML::Node parallel = doc["workload"]["parallel"];
  parallel.SetStyle(YAML::EmitterStyle::Block);
  parallel["dp"] = p.dp;
  parallel["tp"] = p.tp;
  if (p.cp > 1)
    parallel["cp"] = p.cp;
  else
    parallel.remove("cp");
  parallel["pp"] = p.pp;
  parallel["vpp"] = p.vpp;
  parallel["zero"] = p.zero;
  if (p.dp_replicate > 1)
    parallel["dp_replicate"] = p.dp_replicate;
  else
    parallel.remove("dp_replicate");
  parallel["sequence_parallel"] = p.sequence_parallel;
  parallel["partition"] = p.partition == StagePartition::BALANCED ? "balanced" : "even";
  parallel["placement"] = placement_name(p.placement);
  if (training_of(s).model.moe.enabled()) {
    parallel["ep"] = p.ep;
    parallel["etp"] = plan.parallel.expert_tp();
  }
  if (!p.stage_layers.empty())
    parallel["stage_layers"] = p.stage_layers;
  else
    parallel.remove("stage_layers");
  parallel.remove("pipeline_layout");
  for (const auto& [key, on] : {std::pair<const char*, bool>{"account_for_embedding", p.account_for_embedding},
                                {"account_for_loss", p.account_for_loss}})
    if (on)
      parallel[key] = true;
    else
      parallel.remove(key);
  doc["workload"]["batch"]["micro"] = plan.micro;
  doc["workload"]["model"]["recompute"] = recompute_name(plan.recompute);
  if (plan.recompute_modules.empty())
    doc["workload"]["model"].remove("recompute_modules");
  else
    doc["workload"]["model"]["recompute_modules"] = plan.recompute_modules;
  if (plan.fp8 == "none")
    doc["workload"]["model"].remove("fp8");
  else
    doc["workload"]["model"]["fp8"] = plan.fp8;
  if (!plan.dispatcher.empty())
    doc["workload"]["model"]["moe"]["dispatcher"] = plan.dispatcher;
  if (const int limit = training_of(s).model.moe.max_nodes_per_token; limit > 0)
    doc["workload"]["model"]["moe"]["max_nodes_per_token"] = limit;
  if (!plan.schedule.empty())
    doc["policies"]["pipeline"] = plan.schedule;
  YAML::Emitter e;
  e << doc;
  return std::string(e.c_str()) + "\n";
}

} // namespace cs
