// `clustersim kernels`: every kernel of one transformer layer (an MoE model's layer and its routed experts at the
// routing's mean load), the output layer and the embedding for one microbatch on one tensor-parallel rank, with its
// FLOPs, bytes and predicted time, so a user can see where a step's time goes.
#include "sim/cli/command.hpp"

#include "base/input_error.hpp"
#include "models/cost/device_profile.hpp"
#include "models/cost/kernel_cost_model.hpp"
#include "models/devices/device_catalog.hpp"
#include "models/moe/moe_layer_cost.hpp"
#include "models/transformer/transformer.hpp"
#include "sim/run/scenario_checks.hpp"
#include "sim/scenario/scenario.hpp"
#include "workloads/training/training_workload.hpp"

#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

namespace cs {
namespace {

struct KernelsCommand {
  std::string scenario;
  std::vector<std::string> sets;
  bool json = false;
};

int command_kernels(const KernelsCommand& c)
{
  Scenario s = load_scenario(c.scenario, c.sets);
  check_scenario(s);
  const auto* training = dynamic_cast<const TrainingWorkload*>(s.workload.get());
  if (!training || !training->params.model.graph.empty())
    throw InputError(c.scenario, 1, 1, "kernels needs a transformer-training scenario (not a layer graph)");
  const TrainingParams& params = training->params;
  const DeviceSpec& device = *DeviceCatalog::builtin().find(s.cluster.device);
  const DeviceProfile profile =
      s.cluster.profile.empty() ? *builtin_profile(device.name) : load_profile(s.cluster.profile);
  auto cost = make_cost_model(device, profile);
  const LayerShape shape{params.batch.micro, params.parallel.layout(s.cluster.nodes * s.cluster.gpus_per_node),
                         params.framework};
  const ModelParams& model = params.model;
  std::vector<std::pair<const char*, PassKernels>> pieces;
  std::string experts_note;
  if (moe_layer_count(model.moe, model.layers) < model.layers) // a dense layer is there to list
    pieces.emplace_back("layer", layer_kernels(model, shape));
  if (model.moe.enabled()) {
    // As the run prices an MoE layer: its dense part, then the GPU's routed experts, here at the mean load (each of
    // its experts / ep experts gets the microbatch's tokens x top_k of the GPU's share; the run draws the routing).
    pieces.emplace_back("moe_layer", moe_layer_kernels(model, shape));
    const MeanExpertLoad load = mean_expert_load(model, shape);
    const ExpertCost experts(model, *cost, params.framework, shape.parallel.expert_tp());
    pieces.emplace_back(
        "experts", experts.kernels_of_gpu(std::vector<double>(static_cast<std::size_t>(load.experts), load.tokens)));
    experts_note = fmt::format("; experts: {} a GPU at {:.0f} tokens each, {}", load.experts, load.tokens,
                               params.framework.moe_grouped_gemm ? "grouped GEMMs" : "one expert after another");
  }
  pieces.emplace_back("head", head_kernels(model, shape));
  pieces.emplace_back("embedding", embedding_kernels(model, shape));
  if (model.mtp_depth > 0) // each MTP module: these, then a layer and the head as above
    pieces.emplace_back("mtp", mtp_entry_kernels(model, shape));
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  if (!c.json)
    std::cout << fmt::format("{} on {} ({} framework), micro-batch {}, tp {}: one microbatch on one rank{}\n", s.name,
                             device.name, params.framework.name, params.batch.micro, params.parallel.tp, experts_note)
              << fmt::format("{:<10} {:<9} {:<30} {:>10} {:>10} {:>10}  {}\n", "piece", "pass", "kernel", "GFLOP", "MB",
                             "us", "model");
  for (const auto& [piece, kernels] : pieces)
    for (const auto* pass : {&kernels.forward, &kernels.backward}) {
      const char* pass_name = pass == &kernels.forward ? "forward" : "backward";
      double total = 0;
      for (const auto& k : *pass) {
        const CostBreakdown b = cost->predict(k.kernel);
        total += b.total;
        const double flops = kernel_flops(k.kernel), bytes = kernel_bytes(k.kernel);
        if (c.json)
          out.push_back({{"piece", piece},
                         {"pass", pass_name},
                         {"kernel", k.name},
                         {"weight_gradient", k.weight},
                         {"describe", describe_kernel(k.kernel)},
                         {"flops", flops},
                         {"bytes", bytes},
                         {"seconds", b.total},
                         {"model", b.model}});
        else
          std::cout << fmt::format("{:<10} {:<9} {:<30} {:>10.2f} {:>10.1f} {:>10.1f}  {}{}\n", piece, pass_name,
                                   k.name + (k.weight ? " (w)" : ""), flops / 1e9, bytes / 1e6, b.total * 1e6, b.model,
                                   b.detail.empty() ? "" : " (" + b.detail + ")");
      }
      if (!c.json)
        std::cout << fmt::format("{:<10} {:<9} {:<30} {:>43.1f}\n", piece, pass_name, "total", total * 1e6);
    }
  if (c.json)
    std::cout << out.dump(1) << "\n";
  return 0;
}

} // namespace

std::vector<Command> add_kernels_commands(CLI::App& app)
{
  auto c = std::make_shared<KernelsCommand>();
  auto* kernels =
      app.add_subcommand("kernels", "list the kernels of one transformer layer (an MoE layer and its experts), "
                                    "the output layer and the embedding (one microbatch, one TP rank) "
                                    "with FLOPs, bytes and time");
  kernels->add_option("scenario", c->scenario, "transformer-training scenario YAML")->required();
  kernels->add_option("--set", c->sets, "override a key of the scenario (repeatable)");
  kernels->add_flag("--json", c->json, "print JSON");
  return {{kernels, [c] { return command_kernels(*c); }}};
}

} // namespace cs
