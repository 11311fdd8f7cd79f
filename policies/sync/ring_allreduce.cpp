// Ring all-reduce (reduce-scatter then all-gather), expanded step by step into point-to-point transfers.
#include "policies/registry.hpp"
#include "policies/sync/gradient_sync.hpp"

namespace cs {

/** The bandwidth-optimal ring (Patarasuk & Yuan 2009; NCCL's Ring): 2(n-1) steps, in each of which every member
 *  sends one n-th of the bucket to its successor. Step k on member i waits for step k-1 of member i-1 (the chunk
 *  it forwards or reduces into). The reduction arithmetic itself is not charged (it overlaps with the transfer
 *  in NCCL's kernels). */
class RingAllReduce : public GradientSync {
public:
  std::vector<std::vector<int>> synchronize(TaskGraph& graph, const SyncRequest& r) const override
  {
    const int n = static_cast<int>(r.hosts.size());
    std::vector<std::vector<int>> done(n);
    if (n <= 1) {
      for (int i = 0; i < n; ++i)
        if (r.ready[i] >= 0)
          done[i].push_back(r.ready[i]);
      return done;
    }
    const double chunk = r.bytes / n;
    const int steps = 2 * (n - 1);
    std::vector<int> previous(n, -1);
    for (int k = 0; k < steps; ++k) {
      std::vector<int> current(n);
      for (int i = 0; i < n; ++i) {
        TaskLabels labels = r.labels;
        int t = graph.add_transfer(r.comm_streams[i], r.hosts[i], r.hosts[(i + 1) % n], chunk,
                                   k < n - 1 ? "reduce-scatter" : "all-gather", labels);
        if (k == 0 && r.ready[i] >= 0)
          graph.add_dependency(r.ready[i], t);
        if (k > 0)
          graph.add_dependency(previous[(i + n - 1) % n], t);
        current[i] = t;
      }
      previous = current;
    }
    // Member i holds the full result once it has sent its last chunk and received its predecessor's.
    for (int i = 0; i < n; ++i)
      done[i] = {previous[i], previous[(i + n - 1) % n]};
    return done;
  }
};

CS_REGISTER_POLICY(GradientSync, RingAllReduce, "sync", "ring-allreduce",
                   "ring all-reduce: 2(n-1) steps of n-th-size chunks to the next rank (NCCL Ring)");

} // namespace cs
