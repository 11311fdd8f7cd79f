// Capacity planning: the cheapest cluster (GPU type and count, with its best parallel plan) that meets a target
// such as a time to train a token budget.
#pragma once

#include "sim/plan/planner.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cs {

/** "metric<=value" or "metric>=value" over the candidate metrics below. */
struct CapacityTarget {
  std::string metric; // time_to_train_days | time_to_train_hours | tokens_per_s | cost_usd
  bool at_most = true;
  double value = 0;
};
/** Parses a target; InputError at the command line for an unknown metric or a malformed one. */
CapacityTarget parse_capacity_target(const std::string& text);

struct CapacityOptions {
  double tokens = 0;                    // the token budget to train
  std::vector<std::string> devices;     // candidates; empty = every priced GPU with a shipped profile
  std::map<std::string, double> prices; // USD per GPU-hour overrides and additions
  int min_gpus = 0, max_gpus = 1024;    // counts tried: whole nodes, doubling from min (0 = one node)
  std::vector<int> nics_per_node;       // composition axes (empty = the scenario's): NICs per node, and the leaf
  std::vector<double> oversubscription; // level's oversubscription (the top level stays 1)
  double usd_per_nic_hour = 0;          // added per NIC when given (no sourced price: 0 unless the user gives one)
  double usd_per_port_hour = 0;         // added per switch port of the fabric (likewise)
  CapacityTarget target;
  int jobs = 1; // each composition's plans simulated this many at a time (PlanOptions::jobs)
};

struct CapacityCandidate {
  std::string device;
  int gpus = 0;
  int nics_per_node = 0;
  double oversubscription = 1;
  bool planned = false; // some plan fits in memory
  Plan plan;            // the fastest one
  double usd_per_gpu_hour = 0;
  double tokens_per_s = 0, time_to_train_s = 0, cost_usd = 0;
  // With cluster.failures and workload.checkpoint: the long run's ETTR (mean and 95% half-width over seeds) divides
  // the failure-free rate, so tokens_per_s, time_to_train_s and cost_usd are expected values; spares are priced.
  double ettr = 1, ettr_ci95 = 0;
  int spares = 0;
  bool meets_target = false, on_frontier = false; // frontier: no other candidate is both cheaper and faster
  double metric(const std::string& name) const;
};

/** The switch ports of `cluster`'s fabric as the platform builder wires it with `nodes` nodes: one per NIC, and two
 *  per NIC-rate port of each switch-to-switch uplink (its bandwidth ÷ the NIC's, rounded up), so that a higher
 *  oversubscription buys fewer ports and a cluster under one leaf switch buys no uplinks. */
double fabric_switch_ports(const ClusterParams& cluster, int nodes);

/** A composition's price per hour: its GPUs, its NICs and its fabric's switch ports. */
double composition_usd_per_hour(const ClusterParams& cluster, int gpus, double usd_per_gpu_hour,
                                const CapacityOptions& options);

/** The price per GPU-hour of every device: the documented table, with the options' overrides and additions. */
std::map<std::string, double> capacity_prices(const CapacityOptions& options);

/** Calls `visit(scenario, device, gpus, nics, oversubscription)` for every composition the options allow, in device,
 *  GPU count (from max(min_gpus, one node), doubling), NICs, oversubscription order: `base` on that device (its own
 *  links) and fabric. Throws InputError for a device that is not a catalog GPU or has no price, or (with
 *  `need_profile`) no shipped profile. */
void for_each_composition(const Scenario& base, const CapacityOptions& options, bool need_profile,
                          const std::function<void(const Scenario&, const std::string&, int, int, double)>& visit);

/** Every (device, GPU count) tried, in that order, with the frontier and the target marked. Throws InputError for a
 *  device without a price or profile, std::invalid_argument for a scenario the planner cannot take. */
std::vector<CapacityCandidate> plan_capacity(const Scenario& base, const CapacityOptions& options);

} // namespace cs
