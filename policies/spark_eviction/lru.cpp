// LRU: Spark's MemoryStore order (a LinkedHashMap in access order): the block read longest ago goes first.
#include "models/spark/spark_cache.hpp"

namespace cs {

class LruEviction : public CacheEviction {
public:
  std::size_t victim(const std::vector<const CachedBlock*>& blocks, const BlockFuture&) const override
  {
    std::size_t best = 0;
    for (std::size_t i = 1; i < blocks.size(); ++i)
      if (blocks[i]->last_used < blocks[best]->last_used)
        best = i;
    return best;
  }
};

static const bool cs_registered_lru = Registry<CacheEviction>::instance().add(
    "lru", "least recently used (vanilla Spark)", [] { return std::unique_ptr<CacheEviction>(new LruEviction()); });

} // namespace cs
