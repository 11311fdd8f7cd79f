// What both Spark cache layouts share: the eviction policy they are configured with and the disk copies.
#pragma once

#include "models/spark/spark_cache.hpp"

#include <string>

namespace cs {

class CacheLayoutBase : public SparkCache {
public:
  void configure(ObjectReader& r) override
  {
    r.choice("eviction", eviction_name_, Registry<CacheEviction>::instance().names(),
             "which cached block a full store gives up: lru (Spark's), lrc or mrd");
    eviction_ = Registry<CacheEviction>::instance().create(eviction_name_);
  }
  void bind(const BlockFuture& future) override { future_ = &future; }
  std::string eviction_name() const override { return eviction_name_; }

protected:
  explicit CacheLayoutBase(std::string eviction) : eviction_name_(std::move(eviction))
  {
    eviction_ = Registry<CacheEviction>::instance().create(eviction_name_);
  }

  /** Caches `block`, computed by `executor` on `host`, in `store` at `level`: memory first; a level with disk keeps
   *  it on the host's disk when memory cannot, and so it keeps the blocks memory gives up for it. */
  bool store_block(BlockStore& store, const CachedBlock& block, StorageLevel level, int host, int executor,
                   std::vector<CachedBlock>& evicted)
  {
    if (level == StorageLevel::NONE)
      return false;
    bool in_memory = false;
    if (level != StorageLevel::DISK_ONLY) {
      const std::size_t before = evicted.size();
      in_memory = store.insert(block, *eviction_, *future_, evicted);
      levels_[block.id] = level;
      spill(evicted, before, host);
    }
    if (!in_memory && uses_disk(level))
      disk_.add(block.id, host, executor);
    return in_memory;
  }

  /** Evicted blocks from `from` on whose level has disk are dropped to `host`'s disk (MEMORY_AND_DISK). */
  void spill(const std::vector<CachedBlock>& evicted, std::size_t from, int host)
  {
    for (std::size_t i = from; i < evicted.size(); ++i)
      if (uses_disk(levels_[evicted[i].id]))
        disk_.add(evicted[i].id, host, evicted[i].owner);
  }

  std::string eviction_name_;
  std::unique_ptr<CacheEviction> eviction_;
  const BlockFuture* future_ = nullptr;
  DiskBlocks disk_;
  std::map<BlockId, StorageLevel> levels_;
};

} // namespace cs
