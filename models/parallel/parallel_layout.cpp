#include "models/parallel/parallel_layout.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <stdexcept>

namespace cs {

const char* placement_name(Placement placement) { return placement == Placement::TP_DP_PP ? "tp-dp-pp" : "tp-pp-dp"; }

Placement other_placement(Placement placement)
{
  return placement == Placement::TP_PP_DP ? Placement::TP_DP_PP : Placement::TP_PP_DP;
}

const char* cp_comm_name(CpComm comm)
{
  return comm == CpComm::A2A ? "a2a" : comm == CpComm::ALLGATHER ? "allgather" : "p2p";
}

Placement placement_from_name(const std::string& name)
{
  if (name == "tp-pp-dp")
    return Placement::TP_PP_DP;
  if (name == "tp-dp-pp")
    return Placement::TP_DP_PP;
  throw std::invalid_argument("unknown placement '" + name + "' (expected tp-pp-dp or tp-dp-pp)");
}

int ParallelLayout::expert_dp() const
{
  const long long experts = static_cast<long long>(expert_tp()) * ep;
  return experts > 0 ? static_cast<int>(stage_ranks() / experts) : 1;
}

int ParallelLayout::host(const RankCoords& c) const
{
  // The index of the (replica, stage) block of tp x cp GPUs, then the CP and TP ranks inside it.
  const long long block = placement == Placement::TP_DP_PP ? static_cast<long long>(c.stage) * dp + c.replica
                                                           : static_cast<long long>(c.replica) * pp + c.stage;
  return static_cast<int>((block * cp + c.cp_rank) * tp + c.tp_rank);
}

RankCoords ParallelLayout::coords_of(int gpu) const
{
  RankCoords c;
  c.tp_rank = gpu % tp;
  c.cp_rank = (gpu / tp) % cp;
  const int block = gpu / (tp * cp);
  if (placement == Placement::TP_DP_PP) {
    c.replica = block % dp;
    c.stage = block / dp;
  } else {
    c.stage = block % pp;
    c.replica = block / pp;
  }
  return c;
}

int ParallelLayout::stage_rank_host(int stage, long long i) const
{
  const int tp_rank = static_cast<int>(i % tp), cp_rank = static_cast<int>((i / tp) % cp);
  return host(RankCoords{static_cast<int>(i / (static_cast<long long>(tp) * cp)), stage, cp_rank, tp_rank});
}

std::vector<int> ParallelLayout::tp_group(int replica, int stage, int cp_rank) const
{
  std::vector<int> out;
  for (int t = 0; t < tp; ++t)
    out.push_back(host(RankCoords{replica, stage, cp_rank, t}));
  return out;
}

std::vector<int> ParallelLayout::cp_group(int replica, int stage, int tp_rank) const
{
  std::vector<int> out;
  for (int c = 0; c < cp; ++c)
    out.push_back(host(RankCoords{replica, stage, c, tp_rank}));
  return out;
}

std::vector<int> ParallelLayout::pp_group(int replica, int cp_rank, int tp_rank) const
{
  std::vector<int> out;
  for (int s = 0; s < pp; ++s)
    out.push_back(host(RankCoords{replica, s, cp_rank, tp_rank}));
  return out;
}

std::vector<int> ParallelLayout::dp_group(int stage, int cp_rank, int tp_rank) const
{
  std::vector<int> out;
  for (int r = 0; r < dp; ++r)
    out.push_back(host(RankCoords{r, stage, cp_rank, tp_rank}));
  return out;
}

std::vector<int> ParallelLayout::shard_group(int stage) const
{
  std::vector<int> out = dp_group(stage);
  out.resize(static_cast<std::size_t>(shard_dp()));
  return out;
}

int ParallelLayout::ep_group_machines(int gpus_per_machine) const
{
  std::set<int> machines;
  for (int host : ep_group(0, 0))
    machines.insert(host / std::max(1, gpus_per_machine));
  return static_cast<int>(machines.size());
}

std::vector<int> ParallelLayout::ep_group(int group, int stage) const
{
  std::vector<int> out;
  const int etp_ranks = expert_tp();
  for (int k = 0; k < ep; ++k)
    out.push_back(stage_rank_host(stage, (static_cast<long long>(group) * ep + k) * etp_ranks));
  return out;
}

std::vector<int> ParallelLayout::expert_dp_replicas(int replica) const
{
  const int step = ep_replicas() > 0 ? ep_replicas() : 1;
  std::vector<int> out;
  for (int r = replica % step; r < dp; r += step)
    out.push_back(r);
  return out;
}

std::string ParallelLayout::problem() const
{
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"tp", tp}, {"cp", cp}, {"pp", pp}, {"vpp", vpp}, {"ep", ep}, {"dp", dp}})
    if (value < 1)
      return fmt::format("{} = {} must be at least 1", name, value);
  if (etp < 0 || (etp > 0 && tp % etp != 0))
    return fmt::format("etp = {} must divide tp = {}", etp, tp);
  if (zero < 0 || zero > 3)
    return fmt::format("zero = {} must be 0, 1, 2 or 3", zero);
  if (dp_replicate < 1 || dp % dp_replicate != 0)
    return fmt::format("dp_replicate = {} must divide dp = {}", dp_replicate, dp);
  const long long experts = static_cast<long long>(expert_tp()) * ep;
  if (stage_ranks() % experts != 0)
    return fmt::format("etp x ep = {} x {} must divide a stage's tp x cp x dp = {} GPUs", expert_tp(), ep,
                       stage_ranks());
  return "";
}

} // namespace cs
