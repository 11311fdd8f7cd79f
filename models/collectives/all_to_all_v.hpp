// All-to-all with per-pair sizes (all-to-all-v): MoE dispatch and combine, where routing decides what each GPU sends
// each other GPU.
#pragma once

#include "models/collectives/collective_model.hpp"
#include "models/collectives/fluid_all_to_all_v.hpp"

#include <optional>
#include <vector>

namespace cs {

/** The closed form (policies.md section 5 [recon]): every pair's transfer starts at once; inside a machine each GPU's
 *  port carries its sends and its receives; between machines each GPU's share of its machine's NICs carries what it
 *  sends off and receives from off the machine (a hot expert's GPU is held up by its own NIC, as the flows show), and
 *  each machine's NICs what leaves and enters it; the slowest of those, plus one step's and the protocol's latency.
 * `matrix` is n x n bytes, row i sent by rank i to column j. `fabric_seconds`: the whole collective's time where links
 * between switches bind (all_to_all_v_fabric_seconds); the answer is never below it. */
double all_to_all_v_seconds(const std::vector<double>& matrix, const GroupShape& group, const ProtocolParams& protocol,
                            const std::vector<int>& machine_of_rank, double fabric_seconds = 0);

/** The collective's time where copies of the group run at once on a fabric whose links between switches they share
 *  (TaskGraph::flow_copies on an oversubscribed fabric) [recon]: its per-pair flows, with the copies' flows on the
 *  links between switches, replayed under SimGrid's sharing (fluid_all_to_all_v_seconds). The copies are the group
 *  shifted by `offsets` onto GPUs no copy taken covers (disjoint_shifts: the other EP groups and expert-TP ranks, not
 *  the group's own members). 0 where no pair leaves its machine. */
double all_to_all_v_fabric_seconds(const std::vector<double>& matrix, const PlatformSpec& platform,
                                   const std::vector<int>& hosts, const std::vector<int>& offsets,
                                   const ProtocolParams& protocol);

/** The same replay with rank r starting at ready[r] (empty: all at 0), and when each rank's part ends: what a
 *  collective that follows another on the same group sees (AllToAllChains). Empty `done` where no pair leaves its
 *  machine. */
FluidAllToAll all_to_all_v_fabric_replay(const std::vector<double>& matrix, const PlatformSpec& platform,
                                         const std::vector<int>& hosts, const std::vector<int>& offsets,
                                         const ProtocolParams& protocol, const std::vector<double>& ready);

/** fluid_all_to_all_v_signature of that replay; none where no pair leaves its machine. */
std::optional<std::size_t> all_to_all_v_fabric_signature(const std::vector<double>& matrix,
                                                         const PlatformSpec& platform, const std::vector<int>& hosts,
                                                         const std::vector<int>& offsets,
                                                         const ProtocolParams& protocol);

/** The payload bytes the group's pairs move over each direction of the links between switches (2 * link + (up ? 0 :
 *  1)), the group shifted by each of `shifts` (0: the group itself); not the NICs, which are the ranks' own. */
std::vector<std::pair<int, double>> all_to_all_v_switch_bytes(const std::vector<double>& matrix,
                                                              const PlatformSpec& platform,
                                                              const std::vector<int>& hosts,
                                                              const std::vector<int>& shifts);

/** Its flows: one transfer per pair with bytes (up to 8 concurrent per GPU), each rank done once its sends and its
 *  receives have arrived (NCCL runs both in one kernel). Where all_to_all_v_repairs holds, the off-machine bytes
 *  are re-paired instead into at most about 2n flows that carry the same bytes out of every rank and into every
 *  rank, all starting once the last rank is ready and every rank done with the last flow. */
std::vector<std::vector<int>> expand_all_to_all_v(TaskGraph& graph, StreamPool& pool, const PlatformSpec& platform,
                                                  const CollectiveRequest& request);

/** Whether expand_all_to_all_v re-pairs: on a fabric that binds only at the NICs (non-blocking, ideal routing, no
 *  background load, the ideal network model), a group over 8 or more machines whose every off-machine pair sends
 *  bytes. There, per NIC direction, the re-paired flows carry what the pairs would, with n^2 flows cut to ~2n. */
bool all_to_all_v_repairs(const PlatformSpec& platform, const std::vector<int>& hosts,
                          const std::vector<double>& matrix);

/** The protocol all-to-all-v is priced with (NCCL's simple protocol). */
const ProtocolParams& all_to_all_v_protocol();

/** Per rank of `hosts`, its machine. */
std::vector<int> machines_of(const PlatformSpec& platform, const std::vector<int>& hosts);

} // namespace cs
