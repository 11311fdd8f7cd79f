// The collective-algorithm interface: which collectives an algorithm runs, its alpha-beta closed form, and its
// step-wise expansion into transfers. Algorithms register by name (policies/collectives/, one file each); the tuner
// and the expansion iterate the registry.
#pragma once

#include "base/registry.hpp"
#include "models/collectives/collective_model.hpp"
#include "models/collectives/nvls_model.hpp"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace cs {

/** Per rank: the tasks after which the rank holds its result. */
using CollectiveDone = std::vector<std::vector<int>>;

/** Where an expansion puts its tasks and how a step's transfer is costed (protocol overheads, rate cap). */
struct CollectiveEmitter {
  TaskGraph& graph;
  StreamPool& pool;
  const PlatformSpec& platform;
  const CollectiveRequest& req;
  const CollectiveChoice& choice;
  std::uint16_t name;
  std::set<int> gated = {}; // streams whose first transfer already waits for its rank's `ready`

  int ranks() const { return static_cast<int>(req.hosts.size()); }
  int machine(int rank) const;
  /** The group's ranks per machine, machines in id order, each machine's ranks in rank order (local index). */
  std::vector<std::vector<int>> ranks_by_machine() const;
  /** A transfer of `payload` bytes in algorithm step `step` on channel `channel`; every stream's first transfer
   *  waits for its rank's input (a tree's leaf first sends at step 1). `efficiency` and `overhead` replace the
   *  protocol's when given (>= 0 for overhead); `rate` > 0 caps its bytes/s below the protocol's cap. */
  int send(int from_rank, int to_rank, int channel, double payload, int step, double efficiency = -1,
           double overhead = -1, double rate = 0);
  /** A zero-length task on `rank` after `after`. */
  int barrier(int rank, const std::vector<int>& after);
};

class CollectiveAlgorithm {
public:
  virtual ~CollectiveAlgorithm() = default;
  /** Whether it runs `kind` on this group with this protocol (rhd needs a power of two, nvls an NVLS switch). */
  virtual bool supports(const std::string& kind, const ProtocolParams& protocol, const GroupShape& group) const = 0;
  /** The alpha-beta time of one collective of `bytes` (nccl-tests' size); called only when supported. */
  virtual double closed_form(const std::string& kind, const ProtocolParams& protocol, double bytes,
                             const GroupShape& group) const = 0;
  /** The part of closed_form that NCCL's tuner does not model, so does not choose by (the ring's chunk pipeline). */
  virtual double unseen_by_tuner(const std::string& kind, const ProtocolParams& protocol, double bytes,
                                 const GroupShape& group) const
  {
    return 0;
  }
  /** Emits the step-wise transfers of e.req (n >= 2, not p2p). */
  virtual CollectiveDone expand(CollectiveEmitter& e) const = 0;
  /** Whether NCCL's tuner (algorithm "auto") may pick it for this group. */
  virtual bool tuner_eligible(const GroupShape& group) const { return true; }
  /** Whether the closed form equals the expansion's time on an idle non-blocking fabric (then the analytical
   *  backend may price by the form; docs/collectives.md). */
  virtual bool closed_form_exact() const { return true; }
  /** Ties in the tuner go to the lower preference (ring 0, tree 1, rhd 2, nvls 3, direct 4, hierarchical 5, p2p 6). */
  virtual int preference() const = 0;
};

/** Registered algorithms in tuner order (preference, then name). */
const std::vector<std::pair<std::string, const CollectiveAlgorithm*>>& collective_algorithm_list();

#define CS_REGISTER_COLLECTIVE_ALGORITHM(Type, name, description)                                                      \
  static const bool cs_registered_collective_##Type = ::cs::Registry<::cs::CollectiveAlgorithm>::instance().add(       \
      name, description, [] { return std::unique_ptr<::cs::CollectiveAlgorithm>(new Type()); })

// Shared arithmetic of the closed forms.
/** A ring's bandwidth: each GPU's port inside nodes; between nodes, `channels` rings through distinct NICs. */
double ring_bandwidth(const GroupShape& g);
/** One GPU's share of its node's NICs when every GPU of the node sends off-node at once. */
double per_gpu_inter_bandwidth(const GroupShape& g);
/** One algorithm step's latency: the protocol's overhead plus the path's. */
double step_latency(const ProtocolParams& p, const GroupShape& g);
/** Payload bytes per second over a link of `link_bw` under the protocol's efficiency and cap. */
double payload_rate(const ProtocolParams& p, double link_bw);

} // namespace cs
