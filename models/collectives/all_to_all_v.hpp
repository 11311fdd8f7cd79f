// All-to-all with per-pair sizes (all-to-all-v): MoE dispatch and combine, where routing decides what each GPU sends
// each other GPU.
#pragma once

#include "models/collectives/collective_model.hpp"

#include <vector>

namespace cs {

/** The closed form (policies.md section 5 [recon]): every pair's transfer starts at once; inside a machine each GPU's
 *  port carries its sends and its receives; between machines each GPU's share of its machine's NICs carries what it
 *  sends off and receives from off the machine (a hot expert's GPU is held up by its own NIC, as the flows show), and
 *  each machine's NICs what leaves and enters it; the slowest of those, plus one step's and the protocol's latency.
 * `matrix` is n x n bytes, row i sent by rank i to column j. */
double all_to_all_v_seconds(const std::vector<double>& matrix, const GroupShape& group, const ProtocolParams& protocol,
                            const std::vector<int>& machine_of_rank);

/** Its flows: one transfer per pair with bytes, all at once (up to 8 concurrent per GPU); each rank holds its result
 *  once everything sent to it has arrived. */
std::vector<std::vector<int>> expand_all_to_all_v(TaskGraph& graph, StreamPool& pool, const PlatformSpec& platform,
                                                  const CollectiveRequest& request);

/** The protocol all-to-all-v is priced with (NCCL's simple protocol). */
const ProtocolParams& all_to_all_v_protocol();

/** Per rank of `hosts`, its machine. */
std::vector<int> machines_of(const PlatformSpec& platform, const std::vector<int>& hosts);

} // namespace cs
