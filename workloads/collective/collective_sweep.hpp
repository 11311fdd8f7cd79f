// Builds the task graph of an nccl-tests-like sweep: one collective per message size, run back to back.
#pragma once

#include "platform/stragglers.hpp"

#include "models/collectives/collective_model.hpp"
#include "platform/cluster_params.hpp"
#include "workloads/collective/collective_params.hpp"

#include <vector>

namespace cs {

/** How the sweep's sizes are priced: all as flows; by closed form where it matches the flows; all by closed form. */
enum class SweepPricing { FLOWS, CLOSED_FORM_WHERE_EXACT, CLOSED_FORM };

struct CollectiveSweep {
  TaskGraph graph;           // what the backend runs
  int closed_form_sizes = 0; // sizes run as one delay of their closed-form time
  TaskGraph expanded;        // the transfers of those sizes, counted for traffic metrics but not run
  std::vector<int> hosts;    // ranks
  std::vector<double> sizes; // bytes, nccl-tests' "size"
  std::vector<CollectiveChoice> choices;
  std::vector<int> start_marker; // per size: the task after which it starts (-1 for the first)
  std::vector<int> end_marker;   // per size: a zero-length task that ends with the slowest rank
};

/** Sizes from min_bytes to max_bytes, multiplied by `factor` (min 0 becomes a zero-byte row then 1 KiB). */
std::vector<double> sweep_sizes(const CollectiveParams& p);

/** With `stragglers`, rank r reaches size i's collective late by its seeded slowdown of step i (a collective has no
 *  compute, so slow devices change nothing). */
/** Each size waits for the previous one to finish on every rank (like nccl-tests' barriers between sizes). Sizes
 *  priced by closed form (see SweepPricing and closed_form_exact) are each one delay of the tuner's
 *  closed-form time instead of its transfers (DESIGN.md §3: the analytical backend prices collectives by their
 *  alpha-beta forms). */
CollectiveSweep build_collective_sweep(const CollectiveParams& params, const PlatformSpec& platform, int ranks,
                                       SweepPricing pricing = SweepPricing::FLOWS,
                                       const StragglerModel* stragglers = nullptr);

/** Whether the closed forms describe `network` exactly enough to stand in for flows: no background traffic and
 *  no oversubscribed level (the forms see only NICs and NVLink ports), and not rail-optimised (cross-rail
 *  traffic climbs to the spines, which the forms do not model). */
bool closed_forms_fit(const NetworkParams& network);

} // namespace cs
