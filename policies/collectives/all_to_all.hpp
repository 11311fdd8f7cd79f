// What the direct and hierarchical all-to-all algorithms share: their closed form and their expansion, with
// inter-node traffic aggregated per node pair (DESIGN.md §2).
#pragma once

#include "models/collectives/collective_algorithm.hpp"

namespace cs {

double all_to_all_time(bool hierarchical, const ProtocolParams& p, double S, const GroupShape& g);
CollectiveDone expand_all_to_all(CollectiveEmitter& e, bool hierarchical);

} // namespace cs
