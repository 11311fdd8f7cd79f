// HDFS's default block placement (BlockPlacementPolicyDefault), seeded.
#pragma once

#include "models/dataflow/cluster_layout.hpp"

#include <random>
#include <vector>

namespace cs {

/** Replica hosts of one block. Replica 1 on the writer's host (`writer` < 0: a client outside the cluster, so a
 *  random host); replica 2 on a host of another rack; replica 3 on another host of replica 2's rack; any further
 *  replicas on random hosts not used yet. Fewer racks or hosts than that degrade as HDFS does (any unused host). */
std::vector<int> place_block(const ClusterLayout& layout, int writer, int replication, std::mt19937_64& rng);

} // namespace cs
