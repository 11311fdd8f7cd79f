// HSDP's collectives (ParallelLayout::dp_replicate): ZeRO shards over groups of dp / dp_replicate consecutive
// replicas, as torchtitan's (dp_replicate, dp_shard) mesh and Megatron-Core's distributed-optimizer instances do.
#include "workloads/training/training_comm.hpp"

namespace cs {

std::vector<int> CommEmitter::gather_dense(int device, double bytes, const std::vector<int>& ready, TaskLabels labels)
{
  if (!replicated())
    return plan_.sync->gather(out_.graph, group_request(device, bytes, ready, labels));
  const int shard = plan_.parallel.shard_dp();
  std::vector<int> members; // replica-major, CP ranks inside: the dense group's order
  for (int g = 0; g < plan_.parallel.dp_replicate; ++g) {
    const auto part = plan_.sync->gather(out_.graph, group_request(device, bytes, ready, labels, {}, g * shard, shard));
    members.insert(members.end(), part.begin(), part.end());
  }
  return members;
}

// PyTorch FSDP2's HSDP reduce-scatters each gradient over the shard group and all-reduces the resulting shard over
// the replicate group; Megatron-Core's distributed optimizer with several instances does the same between its
// intra-instance group and the inter-instance group. A shard group's member at place j (replica j / cp, CP rank
// j % cp of the group) meets the members at place j of the others. As everywhere in the graph, CP rank 0's
// collective stands for the other CP ranks' alike (CollectiveSpec::copies; the metrics scale its transfers so).
void CommEmitter::reduce_replicated(int device, double bytes, const std::vector<int>& ready, TaskLabels labels,
                                    std::vector<std::vector<int>>& done)
{
  const int shard = plan_.parallel.shard_dp(), groups = plan_.parallel.dp_replicate, pp = plan_.parallel.pp;
  std::vector<std::vector<int>> scattered;
  for (int g = 0; g < groups; ++g)
    scattered.push_back(
        plan_.sync->reduce(out_.graph, group_request(device, bytes, ready, labels, {}, g * shard, shard), true));
  for (int i = 0; i < shard; ++i) { // the places of CP rank 0: replica i of each group
    SyncRequest req;
    for (int g = 0; g < groups; ++g) {
      const int r = g * shard + i;
      const int host = plan_.parallel.host(RankCoords{r, device, 0, 0});
      const bool simulated = r < built_;
      req.hosts.push_back(host);
      req.streams.push_back(simulated ? streams_.get(host, 0) : -1);
      req.ready.push_back(simulated ? scattered[g][static_cast<std::size_t>(i * cp_)] : -1);
    }
    req.bytes = bytes / (shard * cp_);
    req.labels = labels;
    req.copies = cp_;
    const auto reduced = plan_.sync->reduce(out_.graph, req, false);
    for (int g = 0; g < groups; ++g)
      if (g * shard + i < built_)
        done[(g * shard + i) * pp + device].push_back(reduced[g]);
  }
}

} // namespace cs
