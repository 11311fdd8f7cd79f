// `clustersim plan`: prints the best parallel plans for a scenario on N GPUs, optionally confirmed on simgrid.
#pragma once

#include <string>
#include <vector>

namespace cs {

struct PlanCommand {
  std::string scenario;
  std::vector<std::string> sets;
  int gpus = 0;
  std::string memory_limit; // a size ("60GiB"); empty = the device's memory
  int top = 5;
  int confirm = 0; // re-run this many of the best plans on the simgrid backend
  bool exhaustive = false;
  int jobs = 0;    // plans simulated side by side; 0 = default_plan_jobs()
  std::string fp8; // comma-separated recipes to search ("none", a recipe, or "all"); empty = the scenario's
  bool recompute_modules = false; // search selective recomputation over sets of recompute modules
  bool placements = false;        // search both rank orders (tp-pp-dp, tp-dp-pp) for pipelined plans
  std::string dispatchers;        // MoE: comma-separated token dispatchers to search, or "all"; empty = the scenario's
  bool hsdp = false;              // also search ZeRO plans as HSDP (shard groups of whole nodes)
  std::string out_dir;            // optional: plans.csv and best.yaml
};

/** Runs the command; returns the exit code (0 ok, 1 no plan fits, 2 bad input). Throws InputError on bad input. */
int command_plan(const PlanCommand& command);

} // namespace cs
