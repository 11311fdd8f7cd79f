#include "sim/plan/zero3_bound.hpp"

#include "models/collectives/collective.hpp"
#include "models/collectives/collective_algorithm.hpp"
#include "models/collectives/collective_model.hpp"
#include "models/kernels/kernel.hpp"

#include <cmath>
#include <limits>

namespace cs {
namespace {

// The least seconds per byte of any all-gather algorithm and protocol on `shape`: each time is latency plus bytes
// over a bandwidth (rounded up per step), so at a size far above any latency the ratio is its slope to within far
// less than the margin kept.
double least_seconds_per_byte(const GroupShape& shape)
{
  constexpr double huge = 1e15, margin = 1e-6;
  double least = std::numeric_limits<double>::infinity();
  for (const auto& [name, algorithm] : collective_algorithm_list())
    for (const ProtocolParams& protocol : protocols()) {
      const double t = collective_time("all-gather", name, protocol, huge, shape);
      if (std::isfinite(t))
        least = std::min(least, t / huge);
    }
  return std::isfinite(least) ? least * (1 - margin) : 0.0;
}

// The bytes one op gathers on virtual stage `s` in pass `pass` (CommEmitter::plan_slots, the routed experts left out).
double gathered_bytes(const StageCost& s, int pass, const GatherElementBytes& element)
{
  if (pass == static_cast<int>(Pass::BACKWARD_WEIGHT))
    return 0.0;
  double bytes = 0;
  for (const Segment& seg : s.segments)
    if (pass == static_cast<int>(Pass::FORWARD) || !seg.keeps_gathered)
      bytes += dense_gather_bytes(seg, element);
  return bytes;
}

} // namespace

std::vector<double> zero3_gather_seconds(const TrainingParams& params, const Plan& plan, const StageSet& set,
                                         const PlatformSpec& platform, const PassCounts& counts)
{
  const ParallelLayout& p = plan.parallel;
  if (p.zero < 3 || p.dp * p.cp < 2)
    return {};
  const GatherElementBytes element = gather_element_bytes(params.model, params.framework);
  // A pipeline that keeps its stages unsharded gathers each virtual stage once a step (CommEmitter::plan_slots).
  const bool once = params.framework.keeps_stages_gathered(p);
  std::vector<double> out;
  for (std::size_t d = 0; d < counts.size(); ++d) {
    std::vector<int> hosts; // the device's shard group as the run forms it (its TP rank 0s; HSDP: one group's)
    for (int r = 0; r < p.shard_dp(); ++r)
      for (int c = 0; c < p.cp; ++c)
        hosts.push_back(p.host(RankCoords{r, static_cast<int>(d), c, 0}));
    const double per_byte = least_seconds_per_byte(group_shape(platform, hosts));
    double bytes = 0;
    for (std::size_t vs = 0; vs < counts[d].size(); ++vs)
      if (once)
        bytes += counts[d][vs][static_cast<int>(Pass::FORWARD)] > 0
                     ? gathered_bytes(set.stages[vs], static_cast<int>(Pass::FORWARD), element)
                     : 0.0;
      else
        for (int pass = 0; pass < 4; ++pass)
          bytes += counts[d][vs][pass] * gathered_bytes(set.stages[vs], pass, element);
    out.push_back(bytes * per_byte);
  }
  return out;
}

std::vector<double> zero12_gather_seconds(const TrainingParams& params, const Plan& plan, const StageSet& set,
                                          const PlatformSpec& platform)
{
  const ParallelLayout& p = plan.parallel;
  const StageMap& map = set.map;
  if (p.zero < 1 || p.zero >= 3 || p.dp * p.cp * map.chains() < 2)
    return {};
  const GatherElementBytes element = gather_element_bytes(params.model, params.framework);
  std::vector<double> out;
  for (int d = 0; d < map.devices(); ++d) {
    std::vector<int> hosts; // the reduction's group, as CommEmitter forms it (TP rank 0s; with the twin's after)
    for (int device :
         map.chains() > 1 ? std::vector<int>{d, map.device_of(map.twin(map.stage(d, 0)))} : std::vector<int>{d})
      for (int r = 0; r < p.shard_dp(); ++r) // HSDP: the gathers stay in one shard group
        for (int c = 0; c < p.cp; ++c)
          hosts.push_back(p.host(RankCoords{r, device, c, 0}));
    double bytes = 0;
    for (int c = 0; c < map.chunks(); ++c) {
      bytes += dense_gather_bytes(set.stages[map.stage(d, c)], element);
    }
    out.push_back(bytes * least_seconds_per_byte(group_shape(platform, hosts)));
  }
  return out;
}

} // namespace cs
