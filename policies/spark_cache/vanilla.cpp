// Vanilla Spark storage: each executor's MemoryStore caches what its tasks compute, in its own unified-memory storage
// region; a task that needs a block another executor holds fetches it through the BlockManager over the network
// (even from an executor on the same host); co-hosted executors may hold duplicates and strand free memory.
#include "policies/spark_cache/cache_layout.hpp"

namespace cs {

class VanillaCache : public CacheLayoutBase {
public:
  VanillaCache() : CacheLayoutBase("lru") {}

  void add_executor(const CacheExecutor& e) override
  {
    executors_[e.id] = e;
    stores_[e.id] = BlockStore(e.storage_bytes);
  }

  std::vector<CachedBlock> remove_executor(int executor) override
  {
    std::vector<CachedBlock> only_here;
    for (const auto& [id, b] : stores_.at(executor).blocks()) {
      bool elsewhere = false;
      for (const auto& [e, store] : stores_)
        elsewhere = elsewhere || (e != executor && store.contains(id));
      if (!elsewhere)
        only_here.push_back(b);
    }
    stores_.erase(executor);
    executors_.erase(executor);
    disk_.remove_owner(executor);
    return only_here;
  }

  void resize_executor(int executor, double storage_bytes, std::vector<CachedBlock>& evicted) override
  {
    auto& store = stores_.at(executor);
    store.set_capacity(storage_bytes);
    const std::size_t before = evicted.size();
    store.shrink_to_fit(*eviction_, *future_, evicted);
    spill(evicted, before, executors_.at(executor).host);
  }

  BlockLookup lookup(const BlockId& block, int executor, double now) override
  {
    auto& own = stores_.at(executor);
    if (own.contains(block)) {
      own.touch(block, now);
      return {BlockSource::LOCAL, executors_.at(executor).host};
    }
    const int disk_host = disk_.host_of(block);
    if (disk_host >= 0 && disk_host == executors_.at(executor).host)
      return {BlockSource::DISK, disk_host};
    // Another executor's memory: BlockManager.getRemote picks a holder; prefer one on the reader's host.
    int holder = -1;
    for (auto& [e, store] : stores_)
      if (e != executor && store.contains(block) &&
          (holder < 0 || executors_.at(e).host == executors_.at(executor).host))
        holder = e;
    if (holder >= 0) {
      stores_.at(holder).touch(block, now);
      return {BlockSource::REMOTE, executors_.at(holder).host};
    }
    if (disk_host >= 0)
      return {BlockSource::DISK, disk_host};
    return {BlockSource::MISS, -1};
  }

  bool insert(const CachedBlock& block, StorageLevel level, int executor, std::vector<CachedBlock>& evicted) override
  {
    const int host = executors_.at(executor).host;
    return store_block(stores_.at(executor), block, level, host, executor, evicted);
  }

  std::vector<int> holders(const BlockId& block) const override
  {
    std::vector<int> out;
    for (const auto& [e, store] : stores_)
      if (store.contains(block))
        out.push_back(e);
    return out;
  }

  double cached_bytes(int executor) const override { return stores_.at(executor).used(); }

  std::vector<CachedBlock> blocks_of(int executor) const override
  {
    std::vector<CachedBlock> out;
    for (const auto& [id, b] : stores_.at(executor).blocks())
      out.push_back(b);
    return out;
  }

  void drop_application(int app) override
  {
    for (auto& [key, store] : stores_)
      store.erase_application(app);
    disk_.drop_application(app);
  }

private:
  std::map<int, CacheExecutor> executors_;
  std::map<int, BlockStore> stores_;
};

CS_REGISTER_POLICY(SparkCache, VanillaCache, "spark_cache", "vanilla",
                   "per-executor MemoryStore (Spark's own): LRU by default, remote fetch from other executors");

} // namespace cs
