// MRD, most reference distance (Perez, Zhou, Cheng, ICPP'18): a block's reference distance is how many stages of its
// application run before one reads it again; the block used furthest in the future (or never) goes first (ties:
// LRU). [recon] The paper also prefetches the blocks of smallest distance from disk; clustersim does not prefetch.
#include "models/spark/spark_cache.hpp"

namespace cs {

class MrdEviction : public CacheEviction {
public:
  std::size_t victim(const std::vector<const CachedBlock*>& blocks, const BlockFuture& future) const override
  {
    std::size_t best = 0;
    int best_distance = future.distance(blocks[0]->id);
    for (std::size_t i = 1; i < blocks.size(); ++i) {
      const int d = future.distance(blocks[i]->id);
      if (d > best_distance || (d == best_distance && blocks[i]->last_used < blocks[best]->last_used)) {
        best = i;
        best_distance = d;
      }
    }
    return best;
  }
};

static const bool cs_registered_mrd = Registry<CacheEviction>::instance().add(
    "mrd", "most reference distance (Perez et al., ICPP'18), no prefetch [recon]",
    [] { return std::unique_ptr<CacheEviction>(new MrdEviction()); });

} // namespace cs
