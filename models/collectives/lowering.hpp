// Lowers a task graph's COLLECTIVE tasks for a backend: each collective becomes its step-wise transfers (flows) or,
// per member, one delay of its closed-form time.
#pragma once

#include "core/task_graph.hpp"
#include "platform/platform_spec.hpp"

#include <functional>
#include <vector>

namespace cs {

/** How a collective whose every member is simulated is priced; one with a member that is not simulated (a
 *  symmetric replica left out) is always priced by its closed form, since nothing else can stand for that member. */
enum class CollectivePricing {
  FLOWS,       // its algorithm's expansion: contention with everything else on the links (both backends' default)
  CLOSED_FORM, // the tuner's alpha-beta time, on each member's communication stream
};

struct LoweredGraph {
  TaskGraph graph;           // finalized; no COLLECTIVE tasks
  std::vector<int> task_map; // per input task: its task in `graph`; for a collective member, the task after which
                             // the member holds its result when there is one such task, else -1
  /** What the collectives priced by their closed forms would move over every rank of their groups (their
   *  expansions' transfers), inside machines and between them: traffic no transfer task in `graph` stands for. */
  double closed_form_intra_bytes = 0, closed_form_inter_bytes = 0;
  /** The same per link (by index; empty when no collective was priced by its closed form). */
  std::vector<double> closed_form_link_bytes;
  /** Tasks those expansions would have added (what simulating every member would cost). */
  double closed_form_expansion_tasks = 0;
};

/** Copies `in` (not finalized) with every collective lowered. Streams keep their ids; tasks that are not collective
 *  members keep their order within each stream. Throws std::invalid_argument for a collective its algorithm cannot
 *  run. */
LoweredGraph lower_collectives(const TaskGraph& in, const PlatformSpec& platform, CollectivePricing pricing);

/** About graph.size() + closed_form_expansion_tasks of lower_collectives(in, platform, CLOSED_FORM), counted without
 *  lowering (the joins before members with several predecessors are left out): what simulating every member of every
 *  collective would cost, to choose a pricing before paying for either lowering. */
double closed_form_lowering_size(const TaskGraph& in, const PlatformSpec& platform);

} // namespace cs
